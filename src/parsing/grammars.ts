/** The tree-sitter grammars duo-slice ships, by the name callers use. `typescript` and `tsx` are two grammars of one language. */
export type GrammarName = 'javascript' | 'typescript' | 'tsx' | 'python' | 'ruby' | 'go' | 'java' | 'rust' | 'c' | 'cpp' | 'csharp' | 'php' | 'kotlin';

/** What is known about a grammar before its .wasm is loaded. */
export type GrammarInfo = {
  readonly name: GrammarName;
  /** The language as duo-slice names it elsewhere (src/languages.ts): both TypeScript grammars say `typescript`. */
  readonly language: string;
  /** The npm package that ships the .wasm, resolved from the project root. */
  readonly packageName: string;
  /** The .wasm file in that package's root. */
  readonly wasmFile: string;
  /** File extensions, lower case, without the dot. */
  readonly extensions: readonly string[];
  /** Node types that are comments; grammars disagree (`comment`, or `line_comment` and `block_comment`). */
  readonly commentTypes: readonly string[];
};

const grammar = (info: GrammarInfo): GrammarInfo => Object.freeze({ ...info, extensions: Object.freeze([...info.extensions]), commentTypes: Object.freeze([...info.commentTypes]) });

/** Every grammar, by name. */
export const GRAMMARS: Readonly<Record<GrammarName, GrammarInfo>> = Object.freeze({
  javascript: grammar({ name: 'javascript', language: 'javascript', packageName: 'tree-sitter-javascript', wasmFile: 'tree-sitter-javascript.wasm', extensions: ['js', 'jsx', 'mjs', 'cjs'], commentTypes: ['comment'] }),
  typescript: grammar({ name: 'typescript', language: 'typescript', packageName: 'tree-sitter-typescript', wasmFile: 'tree-sitter-typescript.wasm', extensions: ['ts', 'mts', 'cts'], commentTypes: ['comment'] }),
  tsx: grammar({ name: 'tsx', language: 'typescript', packageName: 'tree-sitter-typescript', wasmFile: 'tree-sitter-tsx.wasm', extensions: ['tsx'], commentTypes: ['comment'] }),
  python: grammar({ name: 'python', language: 'python', packageName: 'tree-sitter-python', wasmFile: 'tree-sitter-python.wasm', extensions: ['py'], commentTypes: ['comment'] }),
  ruby: grammar({ name: 'ruby', language: 'ruby', packageName: 'tree-sitter-ruby', wasmFile: 'tree-sitter-ruby.wasm', extensions: ['rb'], commentTypes: ['comment'] }),
  go: grammar({ name: 'go', language: 'go', packageName: 'tree-sitter-go', wasmFile: 'tree-sitter-go.wasm', extensions: ['go'], commentTypes: ['comment'] }),
  java: grammar({ name: 'java', language: 'java', packageName: 'tree-sitter-java', wasmFile: 'tree-sitter-java.wasm', extensions: ['java'], commentTypes: ['line_comment', 'block_comment'] }),
  rust: grammar({ name: 'rust', language: 'rust', packageName: 'tree-sitter-rust', wasmFile: 'tree-sitter-rust.wasm', extensions: ['rs'], commentTypes: ['line_comment', 'block_comment'] }),
  c: grammar({ name: 'c', language: 'c', packageName: 'tree-sitter-c', wasmFile: 'tree-sitter-c.wasm', extensions: ['c', 'h'], commentTypes: ['comment'] }),
  cpp: grammar({ name: 'cpp', language: 'cpp', packageName: 'tree-sitter-cpp', wasmFile: 'tree-sitter-cpp.wasm', extensions: ['cc', 'cpp', 'cxx', 'hpp', 'hh'], commentTypes: ['comment'] }),
  csharp: grammar({ name: 'csharp', language: 'csharp', packageName: 'tree-sitter-c-sharp', wasmFile: 'tree-sitter-c_sharp.wasm', extensions: ['cs'], commentTypes: ['comment'] }),
  php: grammar({ name: 'php', language: 'php', packageName: 'tree-sitter-php', wasmFile: 'tree-sitter-php.wasm', extensions: ['php'], commentTypes: ['comment'] }),
  kotlin: grammar({ name: 'kotlin', language: 'kotlin', packageName: '@tree-sitter-grammars/tree-sitter-kotlin', wasmFile: 'tree-sitter-kotlin.wasm', extensions: ['kt', 'kts'], commentTypes: ['line_comment', 'block_comment'] }),
});

const BY_EXTENSION: ReadonlyMap<string, GrammarName> = new Map(
  Object.values(GRAMMARS).flatMap((info) => info.extensions.map((extension) => [extension, info.name] as const)),
);

/** The grammar for a file name or path (by its extension, case-insensitive), or null when none fits. */
export function grammarForFileName(fileName: string): GrammarName | null {
  const base = fileName.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  if (dot < 0) return null;
  return BY_EXTENSION.get(base.slice(dot + 1).toLowerCase()) ?? null;
}
