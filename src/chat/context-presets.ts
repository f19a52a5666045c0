import { findCodeReadableProject } from '../auth/policies';
import type { Viewer } from '../auth/viewer';
import type { PrismaClient } from '../db/prisma';
import { languageOf } from '../parsing/languages';
import { isExcludedBy } from '../auth/context-exclusions';
import { inlineCode } from './markdown-text';

/** Suggested first questions when nothing more specific is known. */
export const GENERAL_QUESTIONS = [
  'What can you help me with?',
  'How do I write good tests for my code?',
  'How can I make this code easier to read?',
  'What are common causes of a failing CI/CD job?',
] as const;

export const QUESTION_COUNT = { default: 4, max: 10 } as const;

/** A group of suggested questions (GitLab's AiChatQuestionCategory). */
export type QuestionCategory = { key: string; title: string; contextual: boolean; questions: string[] };

/** The categories every page offers, by topic. */
const STATIC_CATEGORIES: readonly QuestionCategory[] = [
  { key: 'duo_chat', title: 'GitLab Duo Chat', contextual: false, questions: [GENERAL_QUESTIONS[0]] },
  { key: 'code', title: 'Code quality', contextual: false, questions: [GENERAL_QUESTIONS[1], GENERAL_QUESTIONS[2]] },
  { key: 'ci_cd', title: 'CI/CD', contextual: false, questions: [GENERAL_QUESTIONS[3]] },
];

/** Suggested questions for Duo Chat: a flat list (`questions`) and by category (`questionCategories`). */
export type ContextPresets = { questions: string[]; categories: QuestionCategory[] };

/** Files with a language that are prose or configuration, not code to ask about. */
const NOT_CODE = new Set(['markdown', 'json', 'yaml', 'toml', 'xml', 'css', 'scss', 'html']);

const TEST_PATH = /(^|\/)(tests?|spec|__tests__|fixtures?)\/|[._-](test|spec)\.[a-z]+$/i;

/**
 * Suggested questions for Duo Chat (`aiChatContextPresets`). For a project whose code the user
 * may read (Reporter and up in a private project: the questions name its files) and whose default
 * branch is indexed, questions name files from its code: the shallowest source files outside
 * tests and the project's Duo context exclusions, which tend to be its entry points. A hidden,
 * missing or unindexed project, or one whose code is not the user's to read, gets the general
 * questions, the same answer in each case.
 */
export async function contextPresets(options: {
  prisma: PrismaClient;
  viewer: Viewer;
  projectId: number | null;
  count: number;
}): Promise<ContextPresets> {
  const count = Math.min(Math.max(options.count, 0), QUESTION_COUNT.max);
  const fromCode = options.projectId === null ? null : await questionsFromCode(options.prisma, options.viewer, options.projectId);
  const questions = [...(fromCode?.questions ?? []), ...GENERAL_QUESTIONS].slice(0, count);
  // As GitLab's: at most one contextual category (about the page's resource), first; the counts do not apply.
  const contextual: QuestionCategory[] = fromCode
    ? [{ key: 'project', title: fromCode.title, contextual: true, questions: fromCode.questions }]
    : [];
  return {
    questions,
    categories: [...contextual, ...STATIC_CATEGORIES.map((category) => ({ ...category, questions: [...category.questions] }))],
  };
}

async function questionsFromCode(
  prisma: PrismaClient,
  viewer: Viewer,
  projectId: number,
): Promise<{ title: string; questions: string[] } | null> {
  const project = await findCodeReadableProject(prisma, viewer, { id: projectId });
  if (!project || !project.duoFeaturesEnabled) return null;
  const index = await prisma.codeIndex.findUnique({
    where: { projectId_ref: { projectId, ref: project.defaultBranch } },
    select: { activeSnapshotId: true },
  });
  if (!index?.activeSnapshotId) return null;
  const files = await prisma.codeIndexFile.findMany({
    where: { snapshotId: index.activeSnapshotId },
    select: { path: true },
    orderBy: { path: 'asc' },
    take: 2000,
  });
  const excluded = isExcludedBy(project.contextExclusions);
  const sources = files
    .map((file) => file.path)
    .filter((path) => {
      const language = languageOf(path);
      return language !== null && !NOT_CODE.has(language) && !TEST_PATH.test(path) && !excluded(path);
    })
    .sort((left, right) => left.split('/').length - right.split('/').length || left.localeCompare(right));
  if (sources.length === 0) return null;
  const [first, second] = sources;
  return {
    title: project.fullPath,
    questions: [
      `What does ${inlineCode(first)} do?`,
      `Give me an overview of how the ${project.name} repository is organised.`,
      ...(second ? [`How is ${inlineCode(second)} used in ${project.name}?`] : []),
    ],
  };
}
