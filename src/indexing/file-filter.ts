import ignore, { type Ignore } from 'ignore';
import { extensionOf } from '../parsing/languages';

/** Why a file is left out of the index; null means it is indexed. */
export type SkipReason = 'excluded' | 'vendored' | 'generated' | 'lockfile' | 'too_large' | 'binary' | 'minified';

export type FileFilterOptions = {
  /** Files over this many bytes are skipped. Default 1,000,000. */
  maxBytes?: number;
  /** The project's context exclusions, in gitignore syntax: never indexed, never returned. Default none. */
  exclusions?: readonly string[];
  /** The repository's .gitattributes, for linguist-vendored and linguist-generated. Default none. */
  gitattributes?: string | null;
};

export type FileFilter = {
  /** What the path and size alone decide, before the content is read. */
  byPath(path: string, size: number): SkipReason | null;
  /**
   * What the content decides: binary, minified or machine-written. `decoded` is the content as
   * UTF-8 text when the caller has it already (it is decoded here otherwise).
   */
  byContent(content: Buffer, decoded?: string): SkipReason | null;
};

const VENDORED_DIRECTORIES = [
  'node_modules/',
  'vendor/',
  'third_party/',
  'third-party/',
  'bower_components/',
  'Pods/',
  '.git/',
  '.yarn/',
  'jspm_packages/',
];
/** The same, each as `/<directory>/`, to look for in `/<path>`. */
const SLASHED_VENDORED_DIRECTORIES = VENDORED_DIRECTORIES.map((directory) => `/${directory}`);
const SLASH = 47;
const LOCKFILES = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'Gemfile.lock',
  'Cargo.lock',
  'poetry.lock',
  'Pipfile.lock',
  'composer.lock',
  'go.sum',
  'mix.lock',
  'pubspec.lock',
  'packages.lock.json',
  'flake.lock',
  'uv.lock',
]);
const GENERATED_NAMES = [
  /\.min\.(js|css|mjs)$/i,
  /\.map$/i,
  /\.pb\.go$/,
  /_pb2(_grpc)?\.py$/,
  /\.pb\.(cc|h)$/,
  /\.generated\.\w+$/i,
  /\.g\.dart$/,
  /\.designer\.cs$/i,
  /(^|\/)__generated__\//,
];
const BINARY_EXTENSIONS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'bmp',
  'ico',
  'webp',
  'tiff',
  'psd',
  'pdf',
  'zip',
  'gz',
  'tgz',
  'bz2',
  'xz',
  '7z',
  'rar',
  'jar',
  'war',
  'class',
  'exe',
  'dll',
  'so',
  'dylib',
  'a',
  'o',
  'obj',
  'wasm',
  'woff',
  'woff2',
  'ttf',
  'otf',
  'eot',
  'mp3',
  'mp4',
  'wav',
  'ogg',
  'mov',
  'avi',
  'sqlite',
  'db',
  'bin',
  'pyc',
]);

// Past these, a file is minified or data, not code a person reads.
const LONGEST_LINE = 1000;
const AVERAGE_LINE = 300;
const MIN_ALPHANUMERIC_SHARE = 0.25;
// Whitespace as String.prototype.trim sees it (WhiteSpace and LineTerminator): `\s` is the same set.
const NOT_WHITESPACE = /\S/;

/** Patterns with linguist-vendored / linguist-generated set (or unset with `-`/`=false`), later lines winning. */
function linguistMatchers(gitattributes: string): { vendored: (path: string) => boolean; generated: (path: string) => boolean } {
  const rules: Array<{ matcher: Ignore; attribute: 'vendored' | 'generated'; value: boolean }> = [];
  for (const line of gitattributes.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const [pattern, ...attributes] = trimmed.split(/\s+/);
    for (const attribute of attributes) {
      const match = /^(-?)linguist-(vendored|generated)(?:=(true|false))?$/.exec(attribute);
      if (!match) continue;
      rules.push({
        matcher: ignore().add(pattern),
        attribute: match[2] as 'vendored' | 'generated',
        value: match[1] !== '-' && match[3] !== 'false',
      });
    }
  }
  const decide = (attribute: 'vendored' | 'generated') => (path: string) => {
    let value = false;
    for (const rule of rules) if (rule.attribute === attribute && rule.matcher.ignores(path)) value = rule.value;
    return value;
  };
  return { vendored: decide('vendored'), generated: decide('generated') };
}

/** Decides which repository files are worth indexing: code people wrote, of a readable size. */
export function createFileFilter(options: FileFilterOptions = {}): FileFilter {
  const maxBytes = options.maxBytes ?? 1_000_000;
  const excluded = ignore().add([...(options.exclusions ?? [])]);
  const hasExclusions = (options.exclusions ?? []).some((pattern) => pattern.trim() !== '');
  const linguist = linguistMatchers(options.gitattributes ?? '');
  return {
    // Runs once per file of the tree (a large monorepo has 100,000), on the event loop: no splitting
    // into arrays and no strings built per rule, 4 → about 1 µs a path.
    byPath(path, size) {
      const normalized = path.charCodeAt(0) === SLASH ? path.replace(/^\/+/, '') : path;
      const slashed = `/${normalized}`;
      if (!normalized || `${slashed}/`.includes('/../')) return 'excluded';
      if (hasExclusions && excluded.ignores(normalized)) return 'excluded';
      const name = normalized.slice(normalized.lastIndexOf('/') + 1);
      if (linguist.vendored(normalized) || SLASHED_VENDORED_DIRECTORIES.some((directory) => slashed.includes(directory))) return 'vendored';
      if (LOCKFILES.has(name)) return 'lockfile';
      if (linguist.generated(normalized) || GENERATED_NAMES.some((pattern) => pattern.test(normalized))) return 'generated';
      if (BINARY_EXTENSIONS.has(extensionOf(name))) return 'binary';
      if (size > maxBytes) return 'too_large';
      return null;
    },
    // Runs once per file read, on the event loop: lines are measured where they are, not split out.
    byContent(content, decoded) {
      if (content.subarray(0, 8000).includes(0)) return 'binary';
      const text = decoded ?? content.toString('utf8');
      if (!NOT_WHITESPACE.test(text)) return null;
      let lines = 1;
      let longest = 0;
      for (let start = 0; ; lines += 1) {
        const end = text.indexOf('\n', start);
        const length = (end === -1 ? text.length : end) - start;
        if (length > longest) longest = length;
        if (end === -1) break;
        start = end + 1;
      }
      if (longest > LONGEST_LINE || text.length / lines > AVERAGE_LINE) return 'minified';
      let alphanumeric = 0;
      let visible = 0;
      for (let index = 0; index < text.length; index += 1) {
        const code = text.charCodeAt(index);
        if (code > 32) visible += 1;
        if ((code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code > 127) alphanumeric += 1;
      }
      if (visible > 200 && alphanumeric / visible < MIN_ALPHANUMERIC_SHARE) return 'minified';
      return null;
    },
  };
}
