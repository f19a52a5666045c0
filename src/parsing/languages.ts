/** Languages by file extension, for prompts and code fences (GitLab's ProgrammingLanguage list, shortened). */
const EXTENSIONS: Record<string, string> = {
  c: 'c',
  h: 'c',
  cc: 'cpp',
  cpp: 'cpp',
  cxx: 'cpp',
  hpp: 'cpp',
  hh: 'cpp',
  cs: 'csharp',
  csx: 'csharp',
  clj: 'clojure',
  cljs: 'clojure',
  dart: 'dart',
  ex: 'elixir',
  exs: 'elixir',
  erl: 'erlang',
  go: 'go',
  sql: 'sql',
  groovy: 'groovy',
  hs: 'haskell',
  html: 'html',
  htm: 'html',
  java: 'java',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  vue: 'vue',
  kt: 'kotlin',
  kts: 'kotlin',
  m: 'objectivec',
  mm: 'objectivec',
  ml: 'ocaml',
  pl: 'perl',
  pm: 'perl',
  php: 'php',
  py: 'python',
  pyw: 'python',
  ipynb: 'python',
  rb: 'ruby',
  erb: 'ruby',
  rake: 'ruby',
  rs: 'rust',
  toml: 'toml',
  scala: 'scala',
  sc: 'scala',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  sol: 'solidity',
  swift: 'swift',
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'typescript',
  vb: 'vbscript',
  v: 'verilog',
  sv: 'verilog',
  json: 'json',
  yml: 'yaml',
  yaml: 'yaml',
  md: 'markdown',
  css: 'css',
  scss: 'scss',
  tf: 'terraform',
  dockerfile: 'dockerfile',
  xml: 'xml',
};

// Both run for every file of a tree an index run plans (100,000 in a large monorepo, on the event
// loop), so they cut the name by position instead of splitting it into arrays.

/** The last part of a path (after the last / or \\), lower case. */
function baseNameOf(fileName: string): string {
  return fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1).toLowerCase();
}

/** A file name's extension, lower case, without the dot ('' when it has none). */
export function extensionOf(fileName: string): string {
  const base = baseNameOf(fileName);
  const dot = base.lastIndexOf('.');
  return dot === -1 ? '' : base.slice(dot + 1);
}

/** The language of a file from its name, or null when unknown. The one extension table of the service. */
export function languageOf(fileName: string): string | null {
  const base = baseNameOf(fileName);
  if (base === 'dockerfile') return 'dockerfile';
  if (base === 'makefile') return 'makefile';
  const extension = extensionOf(base);
  // Own keys only: `x.constructor` is not a language.
  return Object.hasOwn(EXTENSIONS, extension) ? EXTENSIONS[extension] : null;
}
