import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { PROJECT_ROOT } from '../../src/paths';

const CONFIG_SOURCE = path.join(PROJECT_ROOT, 'src', 'config.ts');
const CONFIGURATION_DOC = path.join(PROJECT_ROOT, 'docs', 'configuration.md');

/**
 * Every variable loadConfig asks its environment for, found by handing it an environment that
 * records each name read (however the reads are written: a loop over a schema's keys, `env.X`,
 * destructuring), joined with the names the source reads directly (`env.X`, `env['X']`,
 * `process.env.X`), which also catches a read on a branch the empty environment does not take.
 */
function variablesConfigReads(): Set<string> {
  const read = new Set<string>();
  const recording = new Proxy({}, {
    get(_target, name) {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
    has(_target, name) {
      if (typeof name === 'string') read.add(name);
      return false;
    },
  });
  loadConfig(recording);
  const source = readFileSync(CONFIG_SOURCE, 'utf8');
  for (const match of source.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\])/g)) {
    read.add(match[1] ?? match[2]);
  }
  return read;
}

/** The variables docs/configuration.md documents: the first cell of each table row, a `NAME` in backticks. */
function documentedVariables(): string[] {
  return readFileSync(CONFIGURATION_DOC, 'utf8')
    .split('\n')
    .map((line) => /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

describe('docs/configuration.md', () => {
  const read = variablesConfigReads();
  const documented = documentedVariables();

  it('finds the variables src/config.ts reads (the check below is not empty)', () => {
    expect(read.size).toBeGreaterThan(40);
    expect([...read]).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'LLM_PROVIDER', 'WORKER_NICE']));
  });

  it('documents every variable src/config.ts reads', () => {
    const undocumented = [...read].filter((name) => !documented.includes(name)).sort();
    expect(undocumented).toEqual([]);
  });

  it('documents only variables src/config.ts reads, each once', () => {
    const notRead = documented.filter((name) => !read.has(name)).sort();
    expect(notRead).toEqual([]);
    const repeated = documented.filter((name, index) => documented.indexOf(name) !== index);
    expect(repeated).toEqual([]);
  });
});
