import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { badInput } from '../errors';

/**
 * The question sets of the retrieval evaluation (data/retrieval-eval/sets.json): each names its code
 * base's source (an npm package spec, a Debian source package=version whose upstream tarball is
 * used, or a local git repository, as the training corpus's sets do), its questions file beside
 * the list, its main language, and whether settings were chosen on it (`tuning`) or it only
 * reports (`held-out`). Paths are resolved beside the list.
 */
const QuestionSet = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lower-case letters, digits and dashes'),
    language: z.string().min(1),
    role: z.enum(['tuning', 'held-out']),
    questions: z.string().min(1),
    npm: z.string().min(1).optional(),
    debian: z.string().min(1).optional(),
    repo: z.string().min(1).optional(),
  })
  .refine((set) => [set.npm, set.debian, set.repo].filter(Boolean).length === 1, 'needs exactly one of "npm", "debian" and "repo"');

export type QuestionSet = z.infer<typeof QuestionSet> & { questionsPath: string; repoPath?: string };

/** The sets listed in `file`, their questions files resolved beside it; BAD_USER_INPUT naming what is wrong. */
export function loadQuestionSets(file: string): QuestionSet[] {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw badInput(`${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const parsed = z.array(QuestionSet).min(1).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badInput(`${file}: ${issue.path.join('.') || 'the list'}: ${issue.message}`);
  }
  const names = new Set<string>();
  return parsed.data.map((set) => {
    if (names.has(set.name)) throw badInput(`${file}: the set name "${set.name}" is used twice`);
    names.add(set.name);
    return {
      ...set,
      questionsPath: path.resolve(path.dirname(file), set.questions),
      ...(set.repo ? { repoPath: path.resolve(path.dirname(file), set.repo) } : {}),
    };
  });
}
