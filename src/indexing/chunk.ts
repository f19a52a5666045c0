import { createHash } from 'node:crypto';

/**
 * What a chunk is: a declaration (`function`, `method`, `class`), neighbours merged at the top
 * level (`module`) or inside a class (`block`), or a window of lines of a file without a grammar (`lines`).
 */
export type ChunkKind = 'function' | 'method' | 'class' | 'module' | 'block' | 'lines';

/** A slice of whole lines of one file, the unit that is embedded and searched. */
export type Chunk = {
  path: string;
  /** duo-slice's language name (src/languages.ts, GrammarInfo.language), or null when unknown. */
  language: string | null;
  kind: ChunkKind;
  /** Qualified with `.` (`UserService.findById`); a merged `block` carries its class, a `module` null. */
  symbol: string | null;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  /** Lines startLine to endLine, without the last line's newline. */
  content: string;
};

/** The file to chunk. */
export type ChunkInput = { path: string; content: string };

/** How to chunk. */
export type ChunkOptions = {
  /** Most characters (UTF-16 code units) in a chunk; only a single longer line exceeds it. Default 1,500. */
  maxChars?: number;
  /** Lines repeated at the start of the next line window of a file without a grammar. Default 3. */
  overlapLines?: number;
  /** A parse that takes longer (ms) is given up and the file chunked by lines. Default PARSE_BUDGET_MS (chunk-file.ts). */
  parseBudgetMs?: number;
};

export const DEFAULT_MAX_CHARS = 1_500;
export const DEFAULT_OVERLAP_LINES = 3;

/**
 * Bump whenever the chunks of some file, or what is stored with them (the full-text document of
 * search-text.ts), would change: every chunk id changes with it, so indexes rebuild.
 * v2: damped term counts in the full-text document.
 */
export const CHUNKER_VERSION = 'chunk-v2';

/** Versions that, with the content, make up a chunk's identity. */
export type ChunkIdOptions = {
  /** The embedding model and its settings as one string (e.g. `text-embedding-3-small@1536`). */
  embedderVersion: string;
};

/**
 * A chunk's identity: sha256 (hex) of the chunker version, the embedder version and the content. Path and
 * lines stay out, so a moved or shifted chunk keeps its embedding.
 */
export function chunkId(chunk: Pick<Chunk, 'content'>, options: ChunkIdOptions): string {
  // NUL separators keep ("a", "bc") and ("ab", "c") apart.
  return createHash('sha256')
    .update(CHUNKER_VERSION)
    .update('\0')
    .update(options.embedderVersion)
    .update('\0')
    .update(chunk.content)
    .digest('hex');
}
