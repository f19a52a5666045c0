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
