import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { badInput } from '../../errors';

/**
 * The packages the training corpus is mined from (data/training-corpus/packages.json): each names
 * its source, an npm spec, a Debian source package=version (its upstream tarball) or a Debian binary
 * package=version (`deb`: the code it installs, for the many whose source tarball the mirror lacks),
 * and its main language. Packages the evaluation uses are refused: the question sets of
 * data/retrieval-eval/sets.json and the outside check (knex, fastify, SQLAlchemy, snapd), with their
 * obvious variants, so a model trained on the corpus has never seen the code it is judged on.
 */
const CorpusPackage = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9.-]*$/, 'must be lower-case letters, digits, dots and dashes'),
    language: z.enum(['JavaScript', 'TypeScript', 'Python', 'Go', 'Rust', 'C', 'Java', 'Ruby']),
    npm: z.string().min(1).optional(),
    debian: z.string().min(1).optional(),
    deb: z.string().min(1).optional(),
  })
  .refine((entry) => [entry.npm, entry.debian, entry.deb].filter(Boolean).length === 1, 'needs exactly one of "npm", "debian" and "deb"');

export type CorpusPackage = z.infer<typeof CorpusPackage>;

/** The package's source as written in the list: the npm spec or Debian package=version. */
export function sourceOf(entry: CorpusPackage): string {
  return entry.npm ?? entry.debian ?? entry.deb!;
}

// The evaluation's code bases, by the words their names and sources are made of.
const EVALUATED = ['mysql', 'ioredis', 'rails', 'clap', 'click', 'cobra', 'guava', 'git', 'knex', 'fastify', 'sqlalchemy', 'snapd'];
const GO_TOOLCHAIN = /^golang-1\.\d+$/;

/** Why `entry` may not be in the corpus (it is, or is a variant of, an evaluated code base), or null. */
export function evaluatedPackage(entry: { name: string; npm?: string; debian?: string; deb?: string }): string | null {
  const source = (entry.npm ?? entry.debian ?? entry.deb ?? '').replace(/@[^@]*$|=.*$/, '');
  for (const candidate of [entry.name, source]) {
    const lower = candidate.toLowerCase();
    if (GO_TOOLCHAIN.test(lower) || lower === 'golang') return `${candidate} is the Go toolchain, a held-out set`;
    const words = lower.split(/[^a-z0-9]+/).filter(Boolean);
    // A version or series number on the word is still the same code base (mysql2, golang-1.19).
    const hit = EVALUATED.find((name) => words.some((word) => word === name || word.replace(/\d+$/, '') === name));
    if (hit) return `${candidate} is, or is a variant of, ${hit}, which the evaluation uses`;
  }
  return null;
}

/** The packages listed in `file`; BAD_USER_INPUT naming what is wrong (a bad entry, a duplicate, an evaluated package). */
export function loadCorpusPackages(file: string): CorpusPackage[] {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw badInput(`${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const parsed = z.array(CorpusPackage).min(1).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badInput(`${file}: ${issue.path.join('.') || 'the list'}: ${issue.message}`);
  }
  const names = new Set<string>();
  for (const entry of parsed.data) {
    if (names.has(entry.name)) throw badInput(`${file}: the package name "${entry.name}" is used twice`);
    names.add(entry.name);
    const reason = evaluatedPackage(entry);
    if (reason) throw badInput(`${file}: ${entry.name}: ${reason}`);
  }
  return parsed.data;
}
