// Trains the learned file ranker (npm run train:ranker): indexes each code base of a corpus of
// weakly labelled questions (src/search/training/build-corpus.ts) and of the retrieval eval's
// tuning sets into projects of the configured database that are kept between runs, collects each
// question's candidate files with their features, trains on the corpus's train split and reports
// the hand-weighted ranking beside the learned one on the validation split and the tuning sets.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { PrismaClient } from '../db/prisma';
import { parseQuestions } from '../evaluation/evaluate-retrieval';
import { formatTable } from '../evaluation/evaluate-retrieval';
import { materializeDebianSource, materializeNpmPackage } from '../evaluation/npm-source';
import { loadQuestionSets } from '../evaluation/question-sets';
import { indexRepository } from '../indexing/index-repository';
import { createEmbedder } from '../llm/embedders/create-embedder';
import type { Embedder } from '../llm/embedders/embedder';
import type { Logger } from '../logger';
import { createGroup, createProject } from '../namespaces/namespaces.service';
import { FEATURE_NAMES, RANKER_MODEL_FILE } from '../search/file-features';
import { collectExamples, type RankerExample } from '../search/training/ranker-features';
import { byHand, byModel, rankingQuality, trainRanker } from '../search/training/train-ranker';
import { runCommand } from './run-command';
import type { Config } from '../config';
import { badInput } from '../errors';
import { activeSnapshotScope } from '../search/index-readiness';

const USAGE = `Usage: npm run train:ranker -- --corpus <manifest.json> [--sets <sets.json>] [options]

Trains the learned file ranker on a corpus of weakly labelled questions (npm run corpus:build) and
reports it beside the hand-weighted ranking on the corpus's validation split and on the tuning
sets of --sets (never its held-out sets).

  --corpus    the corpus manifest (npm run corpus:build writes it)
  --sets      the retrieval eval's question sets; their tuning sets are reported, not trained on
  --features  where each code base's examples are kept between runs (default: a folder under /tmp)
  --out       where the model is written (default: ${path.relative(process.cwd(), RANKER_MODEL_FILE)})
  --l2        L2 strength (default 0.001)
  --dry-run   report only; write no model`;

const Manifest = z.object({
  packages: z.array(
    z.object({
      name: z.string().min(1),
      language: z.string().min(1),
      repository: z.string().min(1),
      questions: z.string().min(1),
      split: z.enum(['train', 'validation']),
    }),
  ),
});

type Source = { name: string; role: 'train' | 'validation' | 'tuning'; repository: () => Promise<string>; questions: string };

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    corpus: { type: 'string' },
    sets: { type: 'string' },
    features: { type: 'string' },
    out: { type: 'string' },
    l2: { type: 'string' },
    'dry-run': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});
if (values.help || !values.corpus) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(values.help ? 0 : 2);
}

function sources(): Source[] {
  const manifestFile = path.resolve(values.corpus!);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(manifestFile, 'utf8'));
  } catch (error) {
    throw badInput(`the corpus manifest ${manifestFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const parsed = Manifest.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badInput(`the corpus manifest ${manifestFile}: ${issue.path.join('.') || 'the document'}: ${issue.message}`);
  }
  const manifest = parsed.data;
  const base = path.dirname(manifestFile);
  const list: Source[] = manifest.packages.map((entry) => ({
    name: `corpus-${entry.name}`,
    role: entry.split,
    repository: async () => path.resolve(base, entry.repository),
    questions: path.resolve(base, entry.questions),
  }));
  if (values.sets) {
    for (const set of loadQuestionSets(values.sets).filter((entry) => entry.role === 'tuning')) {
      const directory = path.join(os.tmpdir(), 'duo-eval-sources', set.npm ? set.npm.replace(/[^\w.-]+/g, '_') : set.name);
      list.push({
        name: `set-${set.name}`,
        role: 'tuning',
        repository: async () =>
          set.npm
            ? (await materializeNpmPackage({ spec: set.npm, directory })).repository
            : (await materializeDebianSource({ source: set.debian!, message: set.name, directory })).repository,
        questions: set.questionsPath,
      });
    }
  }
  return list;
}

/** The kept project a code base is indexed in: `ranker-training/<name>`. */
async function projectFor(prisma: PrismaClient, name: string, repository: string): Promise<number> {
  const group =
    (await prisma.group.findFirst({ where: { fullPath: 'ranker-training' } })) ??
    (await createGroup(prisma, { path: 'ranker-training', name: 'File ranker training (kept between runs)' }));
  const projectPath = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 60);
  const existing = await prisma.project.findFirst({ where: { fullPath: `${group.fullPath}/${projectPath}` } });
  if (existing) return existing.id;
  return (await createProject(prisma, { fullPath: `${group.fullPath}/${projectPath}`, repository, duoFeaturesEnabled: true })).project.id;
}

async function examplesOf(options: {
  prisma: PrismaClient;
  embedder: Embedder;
  logger: Logger;
  config: Config;
  source: Source;
  cacheDir: string;
}): Promise<RankerExample[]> {
  const { prisma, source } = options;
  const questionsText = readFileSync(source.questions, 'utf8');
  const key = `${source.name}.${FEATURE_NAMES.length}.${Buffer.from(questionsText).length}.jsonl`;
  const cached = path.join(options.cacheDir, key);
  if (existsSync(cached))
    return readFileSync(cached, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as RankerExample);
  const repository = await source.repository();
  const projectId = await projectFor(prisma, source.name, repository);
  process.stderr.write(`${source.name}: indexing…\n`);
  await indexRepository({
    prisma,
    embedder: options.embedder,
    logger: options.logger,
    dataDir: options.config.dataDir,
    projectId,
    ref: 'HEAD',
    maxFileBytes: options.config.indexing.maxFileBytes,
  });
  const scope = await activeSnapshotScope(prisma, { projectId, ref: 'HEAD' });
  if (!scope) throw badInput(`${source.name}: ${repository} has no HEAD to index`);
  const examples = await collectExamples({
    prisma,
    embedder: options.embedder,
    scope,
    source: source.name,
    questions: parseQuestions(questionsText, source.questions),
  });
  writeFileSync(cached, examples.map((example) => JSON.stringify(example)).join('\n') + '\n');
  return examples;
}

const figures = (quality: ReturnType<typeof rankingQuality>) => [
  String(quality.questions),
  quality.candidateRecall.toFixed(3),
  quality.recallAt1.toFixed(3),
  quality.recallAt5.toFixed(3),
  quality.mrr.toFixed(3),
];

void runCommand(async ({ config, database, logger }) => {
  const embedder = await createEmbedder(config.embeddings);
  const cacheDir = path.resolve(values.features ?? path.join(os.tmpdir(), 'duo-ranker-features'));
  mkdirSync(cacheDir, { recursive: true });
  const bySource = new Map<Source, RankerExample[]>();
  for (const source of sources()) {
    bySource.set(source, await examplesOf({ prisma: database.prisma, embedder, logger, config, source, cacheDir }));
  }
  const of = (role: Source['role']) => [...bySource].filter(([source]) => source.role === role).flatMap(([, examples]) => examples);
  const model = trainRanker(of('train'), { l2: values.l2 ? Number(values.l2) : undefined, perSourceCap: 40 });
  const rows: string[][] = [];
  for (const role of ['train', 'validation', 'tuning'] as const) {
    const examples = of(role);
    if (!examples.length) continue;
    rows.push([role, 'hand', ...figures(rankingQuality(examples, byHand))]);
    rows.push([role, 'learned', ...figures(rankingQuality(examples, byModel(model)))]);
  }
  for (const [source, examples] of bySource) {
    if (source.role !== 'tuning') continue;
    rows.push([source.name, 'hand', ...figures(rankingQuality(examples, byHand))]);
    rows.push([source.name, 'learned', ...figures(rankingQuality(examples, byModel(model)))]);
  }
  process.stdout.write(`${formatTable(['examples', 'ranking', 'questions', 'in candidates', 'R@1', 'R@5', 'MRR'], rows)}\n\n`);
  process.stdout.write(`${FEATURE_NAMES.map((name, index) => `${name} ${model.weights[index]}`).join('\n')}\n`);
  if (!values['dry-run']) {
    const out = path.resolve(values.out ?? RANKER_MODEL_FILE);
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(model, null, 2)}\n`);
    process.stderr.write(`wrote ${out}\n`);
  }
  return undefined;
});
