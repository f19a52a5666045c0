import type { PrismaClient } from '../../db/prisma';
import type { Embedder } from '../../llm/embedders/embedder';
import { fileFeatures } from '../file-features';
import { searchCandidates } from '../search-code';
import type { SearchScope } from '../search-scope';

/** One question's candidate files as the ranker sees them: features, and whether the file answers. */
export type RankerExample = {
  /** The code base (a corpus package or a question set). */
  source: string;
  question: string;
  snapshotFiles: number;
  candidates: Array<{ path: string; relevant: boolean; features: number[] }>;
};

/**
 * The ranker's examples for the questions about one indexed snapshot: each question searched as
 * searchCode searches it (hybrid), every candidate file with its features and label.
 */
export async function collectExamples(options: {
  prisma: PrismaClient;
  embedder: Embedder;
  scope: SearchScope & { embedderVersion: string };
  source: string;
  questions: ReadonlyArray<{ q: string; files: readonly string[] }>;
}): Promise<RankerExample[]> {
  const examples: RankerExample[] = [];
  for (const question of options.questions) {
    const { ranked, snapshotFiles } = await searchCandidates({
      prisma: options.prisma,
      embedder: options.embedder,
      scope: options.scope,
      query: question.q,
      limit: 10,
      maxPerFile: 1,
      allFeatures: true,
    });
    const features = fileFeatures(ranked, { snapshotFiles });
    const wanted = new Set(question.files);
    examples.push({
      source: options.source,
      question: question.q,
      snapshotFiles,
      candidates: ranked.map((file, index) => ({ path: file.path, relevant: wanted.has(file.path), features: features[index] })),
    });
  }
  return examples;
}
