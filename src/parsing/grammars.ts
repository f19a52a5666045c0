import { extensionOf, languageOf } from './languages';

/** The tree-sitter grammars duo-slice ships, by the name callers use. `typescript` and `tsx` are two grammars of one language. */
export type GrammarName =
  'javascript' | 'typescript' | 'tsx' | 'python' | 'ruby' | 'go' | 'java' | 'rust' | 'c' | 'cpp' | 'csharp' | 'php' | 'kotlin';

/** What is known about a grammar before its .wasm is loaded. */
export type GrammarInfo = {
  readonly name: GrammarName;
  /** The language as duo-slice names it elsewhere (src/parsing/languages.ts): both TypeScript grammars say `typescript`. */
  readonly language: string;
  /** The npm package that ships the .wasm, resolved from the project root. */
  readonly packageName: string;
  /** The .wasm file in that package's root. */
  readonly wasmFile: string;
  /** Node types that are comments; grammars disagree (`comment`, or `line_comment` and `block_comment`). */
  readonly commentTypes: readonly string[];
};

const grammar = (info: GrammarInfo): GrammarInfo => Object.freeze({ ...info, commentTypes: Object.freeze([...info.commentTypes]) });

/** Every grammar, by name. */
export const GRAMMARS: Readonly<Record<GrammarName, GrammarInfo>> = Object.freeze({
  javascript: grammar({
    name: 'javascript',
    language: 'javascript',
    packageName: 'tree-sitter-javascript',
    wasmFile: 'tree-sitter-javascript.wasm',
    commentTypes: ['comment'],
  }),
  typescript: grammar({
    name: 'typescript',
    language: 'typescript',
    packageName: 'tree-sitter-typescript',
    wasmFile: 'tree-sitter-typescript.wasm',
    commentTypes: ['comment'],
  }),
  tsx: grammar({
    name: 'tsx',
    language: 'typescript',
    packageName: 'tree-sitter-typescript',
    wasmFile: 'tree-sitter-tsx.wasm',
    commentTypes: ['comment'],
  }),
  python: grammar({
    name: 'python',
    language: 'python',
    packageName: 'tree-sitter-python',
    wasmFile: 'tree-sitter-python.wasm',
    commentTypes: ['comment'],
  }),
  ruby: grammar({
    name: 'ruby',
    language: 'ruby',
    packageName: 'tree-sitter-ruby',
    wasmFile: 'tree-sitter-ruby.wasm',
    commentTypes: ['comment'],
  }),
  go: grammar({ name: 'go', language: 'go', packageName: 'tree-sitter-go', wasmFile: 'tree-sitter-go.wasm', commentTypes: ['comment'] }),
  java: grammar({
    name: 'java',
    language: 'java',
    packageName: 'tree-sitter-java',
    wasmFile: 'tree-sitter-java.wasm',
    commentTypes: ['line_comment', 'block_comment'],
  }),
  rust: grammar({
    name: 'rust',
    language: 'rust',
    packageName: 'tree-sitter-rust',
    wasmFile: 'tree-sitter-rust.wasm',
    commentTypes: ['line_comment', 'block_comment'],
  }),
  c: grammar({ name: 'c', language: 'c', packageName: 'tree-sitter-c', wasmFile: 'tree-sitter-c.wasm', commentTypes: ['comment'] }),
  cpp: grammar({
    name: 'cpp',
    language: 'cpp',
    packageName: 'tree-sitter-cpp',
    wasmFile: 'tree-sitter-cpp.wasm',
    commentTypes: ['comment'],
  }),
  csharp: grammar({
    name: 'csharp',
    language: 'csharp',
    packageName: 'tree-sitter-c-sharp',
    wasmFile: 'tree-sitter-c_sharp.wasm',
    commentTypes: ['comment'],
  }),
  php: grammar({
    name: 'php',
    language: 'php',
    packageName: 'tree-sitter-php',
    wasmFile: 'tree-sitter-php.wasm',
    commentTypes: ['comment'],
  }),
  kotlin: grammar({
    name: 'kotlin',
    language: 'kotlin',
    packageName: '@tree-sitter-grammars/tree-sitter-kotlin',
    wasmFile: 'tree-sitter-kotlin.wasm',
    commentTypes: ['line_comment', 'block_comment'],
  }),
});

// One grammar per language; TypeScript's second grammar (tsx) is chosen by extension below.
const BY_LANGUAGE: ReadonlyMap<string, GrammarName> = new Map(
  Object.values(GRAMMARS)
    .filter((info) => info.name !== 'tsx')
    .map((info) => [info.language, info.name] as const),
);

// Files named after a language whose text is not its source: notebooks are JSON, ERB is a template.
const NOT_SOURCE = new Set(['ipynb', 'erb']);

/** The grammar for a file name or path (its language, from src/parsing/languages.ts), or null when none fits. */
export function grammarForFileName(fileName: string): GrammarName | null {
  const language = languageOf(fileName);
  if (language === null) return null;
  const extension = extensionOf(fileName);
  if (NOT_SOURCE.has(extension)) return null;
  if (language === 'typescript' && extension === 'tsx') return 'tsx';
  return BY_LANGUAGE.get(language) ?? null;
}
