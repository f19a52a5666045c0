import { snippetShape, type BoilerplateKind } from './boilerplate';

/**
 * Which lines of a found file are shown and given to the model, and in which order: the file's
 * chunk hits, best first, become at most a few snippets that answer the question, the best first.
 *
 * - A chunk that is only boilerplate (imports, a package line, a re-export list, a license header:
 *   boilerplate.ts) is left out, so the slot goes to the next chunk that holds code; a chunk that
 *   starts with boilerplate is shown from its code on. A file whose only hits are boilerplate keeps
 *   them: it was found for them (a module that only re-exports, a constants list).
 * - A question about that boilerplate ("what does this file import", "which license") gets it, first.
 * - Snippets that overlap or touch are merged, and the merged snippets are ordered by their best
 *   chunk's score: the first one is what answers best, whatever its line.
 */

export type SnippetHit = { startLine: number; endLine: number; content: string; score: number; symbol: string | null };

/** Which boilerplate the question asks about (none for most questions). */
export type SnippetIntent = ReadonlySet<BoilerplateKind>;

const INTENT_PATTERNS: Record<BoilerplateKind, RegExp> = {
  imports:
    /\b(imports?|imported|importing|dependencies|depends on|depend on|#\s*include|include directives?|require calls?|required modules?)\b/i,
  exports: /\b(re-?exports?|re-?exported|exports|exported|export lists?|public api)\b/i,
  license: /\b(licen[cs]es?|licen[cs]ed|licensing|copyright|spdx)\b/i,
};

/** The boilerplate a question asks about: its imports, what it exports, its license. */
export function snippetIntent(question: string): SnippetIntent {
  return new Set((Object.keys(INTENT_PATTERNS) as BoilerplateKind[]).filter((kind) => INTENT_PATTERNS[kind].test(question)));
}

export type ChooseSnippetsOptions = {
  path: string;
  language: string | null;
  intent: SnippetIntent;
  /** Chunks kept before merging. Default 3. */
  maxPerFile?: number;
};

type Candidate = SnippetHit & { asked: boolean };

function trimmed(hit: SnippetHit, leading: number): SnippetHit {
  if (leading === 0) return hit;
  return { ...hit, startLine: hit.startLine + leading, content: hit.content.split('\n').slice(leading).join('\n') };
}

function merge(a: Candidate, b: Candidate): Candidate {
  const lines = new Map<number, string>();
  for (const snippet of [a, b]) snippet.content.split('\n').forEach((line, index) => lines.set(snippet.startLine + index, line));
  const startLine = Math.min(a.startLine, b.startLine);
  const endLine = Math.max(a.endLine, b.endLine);
  const content: string[] = [];
  for (let line = startLine; line <= endLine; line += 1) content.push(lines.get(line) ?? '');
  return {
    startLine,
    endLine,
    content: content.join('\n'),
    score: Math.max(a.score, b.score),
    symbol: a.score >= b.score ? a.symbol : b.symbol,
    asked: a.asked || b.asked,
  };
}

/** A file's snippets for a question, from its chunk hits (best first): best first, merged, without boilerplate no one asked for. */
export function chooseSnippets(hits: readonly SnippetHit[], options: ChooseSnippetsOptions): SnippetHit[] {
  const maxPerFile = options.maxPerFile ?? 3;
  const code: Candidate[] = [];
  const boilerplate: Candidate[] = [];
  for (const hit of hits) {
    const shape = snippetShape({ content: hit.content, language: options.language, path: options.path });
    if (shape.boilerplate) {
      const asked = [...shape.kinds].some((kind) => options.intent.has(kind));
      (asked ? code : boilerplate).push({ ...hit, asked });
    } else {
      // Asked-for boilerplate at the top of a chunk stays: the import question wants the imports.
      code.push({ ...(options.intent.size ? hit : trimmed(hit, shape.leading)), asked: false });
    }
  }
  // Stable: asked-for boilerplate first, each group in the hits' order (best first).
  const chosen = (code.length ? code : boilerplate).sort((a, b) => Number(b.asked) - Number(a.asked)).slice(0, maxPerFile);
  const merged: Candidate[] = [];
  for (const snippet of [...chosen].sort((a, b) => a.startLine - b.startLine)) {
    const last = merged[merged.length - 1];
    if (last && snippet.startLine <= last.endLine + 1) merged[merged.length - 1] = merge(last, snippet);
    else merged.push(snippet);
  }
  return merged
    .sort((a, b) => Number(b.asked) - Number(a.asked) || b.score - a.score || a.startLine - b.startLine)
    .map(({ asked: _asked, ...snippet }) => snippet);
}
