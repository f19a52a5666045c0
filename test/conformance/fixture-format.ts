import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One request a GitLab client sends, kept as data (format: test/conformance/README.md). */
export type Check = {
  /** Dot path into the JSON answer: `data.currentUser.username`, `results[0].path`; '' for the whole body. */
  path: string;
  equals?: unknown;
  matches?: string;
  includes?: unknown;
  length?: number;
  minLength?: number;
  type?: 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null';
};

export type Fixture = {
  name: string;
  kind: 'graphql' | 'rest';
  client: 'gitlab-lsp' | 'gitlab-vscode-extension' | 'gitlab-web' | 'duo-ui';
  source: { repository: string; path: string | null; ref?: string; readFrom?: string };
  versions: { since: string | null; until: string | null };
  notes?: string;
  operationName?: string | null;
  document?: string;
  variables?: Record<string, unknown>;
  transport?: 'http' | 'subscription';
  method?: string;
  path?: string;
  query?: Record<string, unknown>;
  headers?: Record<string, string>;
  body?: unknown;
  auth?: 'token' | 'none';
  expect: { status?: number; noErrors?: boolean; checks: Check[] };
  /** Set by the loader: the file it came from, relative to test/conformance. */
  file: string;
};

/** Every fixture under test/conformance/<folder>, sorted by file. */
export function loadFixtures(folder: 'graphql' | 'rest'): Fixture[] {
  const root = path.join(__dirname, folder);
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.json')) files.push(full);
    }
  };
  walk(root);
  return files
    .sort()
    .map((file) => ({ ...(JSON.parse(readFileSync(file, 'utf8')) as Omit<Fixture, 'file'>), file: path.relative(__dirname, file) }));
}

/** Compares GitLab versions the way clients do: numeric major.minor.patch, a `-pre` sorting before its release. */
export function compareVersions(left: string, right: string): number {
  const parse = (version: string) => {
    const [core, pre] = version.split('-', 2);
    const parts = core.split('.').map((part) => Number(part) || 0);
    while (parts.length < 3) parts.push(0);
    return { parts, pre: pre !== undefined };
  };
  const a = parse(left);
  const b = parse(right);
  for (let index = 0; index < 3; index += 1) {
    if (a.parts[index] !== b.parts[index]) return a.parts[index] - b.parts[index];
  }
  return Number(b.pre) - Number(a.pre);
}

/** Whether the client sends the request to an instance reporting `version`. */
export function sentAt(fixture: Fixture, version: string): boolean {
  const { since, until } = fixture.versions;
  return (since === null || compareVersions(version, since) >= 0) && (until === null || compareVersions(version, until) < 0);
}

/** Fills `{{name}}` placeholders; a string that is exactly one placeholder takes the value's own type. */
export function fill<T>(value: T, values: Record<string, unknown>): T {
  if (typeof value === 'string') {
    const whole = /^\{\{([\w.]+)\}\}$/.exec(value);
    if (whole) {
      if (!(whole[1] in values)) throw new Error(`unknown placeholder {{${whole[1]}}}`);
      return values[whole[1]] as T;
    }
    return value.replace(/\{\{([\w.]+)\}\}/g, (_match, name: string) => {
      if (!(name in values)) throw new Error(`unknown placeholder {{${name}}}`);
      return String(values[name]);
    }) as T;
  }
  if (Array.isArray(value)) return value.map((item) => fill(item, values)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fill(item, values)])) as T;
  return value;
}

export function valueAt(body: unknown, dotPath: string): unknown {
  if (!dotPath) return body;
  let current: unknown = body;
  for (const part of dotPath.replace(/\[(\d+)\]/g, '.$1').split('.')) {
    if (current === null || current === undefined) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

const typeOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** The checks that fail, each as one readable line; empty when the answer is sensible. */
export function failedChecks(body: unknown, checks: Check[]): string[] {
  const failures: string[] = [];
  for (const check of checks) {
    const value = valueAt(body, check.path);
    const shown = JSON.stringify(value)?.slice(0, 200);
    if ('equals' in check && JSON.stringify(value) !== JSON.stringify(check.equals))
      failures.push(`${check.path}: expected ${JSON.stringify(check.equals)}, got ${shown}`);
    if (check.matches !== undefined && !(typeof value === 'string' && new RegExp(check.matches).test(value)))
      failures.push(`${check.path}: expected to match /${check.matches}/, got ${shown}`);
    if ('includes' in check && !(Array.isArray(value) && value.some((item) => JSON.stringify(item) === JSON.stringify(check.includes))))
      failures.push(`${check.path}: expected to include ${JSON.stringify(check.includes)}, got ${shown}`);
    if (check.length !== undefined && !(Array.isArray(value) && value.length === check.length))
      failures.push(`${check.path}: expected ${check.length} items, got ${shown}`);
    if (check.minLength !== undefined && !(Array.isArray(value) && value.length >= check.minLength))
      failures.push(`${check.path}: expected at least ${check.minLength} items, got ${shown}`);
    if (check.type !== undefined && typeOf(value) !== check.type) failures.push(`${check.path}: expected ${check.type}, got ${shown}`);
  }
  return failures;
}
