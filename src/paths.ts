import { existsSync } from 'node:fs';
import path from 'node:path';

function findProjectRoot(start: string): string {
  let directory = start;
  while (!existsSync(path.join(directory, 'package.json'))) {
    const parent = path.dirname(directory);
    if (parent === directory) return process.cwd();
    directory = parent;
  }
  return directory;
}

/** The checkout's top folder, whether running from src/ (swc) or dist/src/ (tsc). */
export const PROJECT_ROOT = findProjectRoot(__dirname);
export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'prisma', 'migrations');
export const SCHEMA_FILE = path.join(PROJECT_ROOT, 'schema.graphql');

/**
 * A worker thread's file beside the module that starts it (`name` without extension) and the
 * execArgv it needs. Compiled, the file is .js and needs nothing; run from source (tests, benches)
 * it is .ts and needs a TypeScript loader: the light one of scripts/thread-register.js, not the
 * main thread's @swc-node/register, which loads TypeScript's compiler (about 40 MiB) into every thread.
 */
export function threadFile(startingModule: string, name: string): { file: string; execArgv: string[] } {
  const extension = path.extname(startingModule);
  return {
    file: path.join(path.dirname(startingModule), `${name}${extension}`),
    execArgv: extension === '.ts' ? ['--require', path.join(PROJECT_ROOT, 'scripts', 'thread-register.js')] : [],
  };
}
