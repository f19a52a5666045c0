/**
 * A company's instance for bench/search.ts: many projects of synthetic code, written through the
 * indexer's own write path (storeBatch, the snapshot activated as an index run activates it,
 * collectGarbage's covers_project mark, promotion to the HNSW graph for a project that reaches
 * VECTOR_GRAPH_MIN_CHUNKS), without git or tree-sitter, so a million chunks take minutes.
 *
 * The code is synthetic but shaped like real code: words drawn by their frequency in TypeScript's
 * own declarations (a Zipf-like vocabulary of identifier parts), each project with a few dozen
 * domain words of its own, files of several functions in TypeScript, Python or Go with a doc comment,
 * parameters and 6-24 lines of statements, tests beside implementations. Each chunk is embedded by
 * the lexical embedder and given its full-text document exactly as chunkAndEmbed does.
 *
 * Projects are built one by one and each is finished (its index ready) before the next: a run cut
 * short is resumed by the next one, which skips the ready projects.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  collectGarbage,
  promoteToVectorGraph,
  snapshotLexicalRows,
  storeKeywordIndex,
  storeBatch,
  VECTOR_GRAPH_MIN_CHUNKS,
  type BlobChunkRow,
  type FileRow,
  type NewChunk,
} from '../../src/db/code-chunks';
import type { PrismaClient } from '../../src/db/prisma';
import { chunkerVersionOf } from '../../src/indexing/chunk-file';
import { chunkId } from '../../src/indexing/chunk';
import { fileRole } from '../../src/indexing/file-role';
import { activateSnapshot } from '../../src/indexing/index-repository';
import { KEYWORD_INDEX_FORMAT, LexicalIndex } from '../../src/search/lexical-index';
import { chunkEmbeddingText, searchDocumentOfTerms } from '../../src/indexing/search-text';
import { tsvectorBinary, vectorBinary } from '../../src/db/pg-binary';
import type { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { identifierTerms } from '../../src/llm/embedders/terms';
import { addMember, assignSeat, buyAddOn, createGroup, createProject } from '../../src/namespaces/namespaces.service';
import { createToken, createUser } from '../../src/users/users.service';
import { PROJECT_ROOT } from '../../src/paths';
import { createRandom } from '../../src/random';

export type FleetShape = { projects: number; chunksPerProject: number };

const GROUP = 'fleet';
const USER = 'fleet-developer';

/** Identifier parts by their frequency in TypeScript's declarations: the vocabulary, most common first. */
function vocabulary(): { words: string[]; weights: Float64Array } {
  const text = readFileSync(path.join(PROJECT_ROOT, 'node_modules/typescript/lib/typescript.d.ts'), 'utf8');
  const counts = new Map<string, number>();
  for (const term of identifierTerms(text)) {
    if (term.length < 3 || term.includes('_') || /\d/.test(term)) continue;
    counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 4000);
  const weights = new Float64Array(sorted.length);
  let sum = 0;
  for (const [index, [, count]] of sorted.entries()) weights[index] = sum += count;
  return { words: sorted.map(([word]) => word), weights };
}

const VERBS = [
  'get', 'set', 'create', 'update', 'delete', 'parse', 'build', 'load', 'save', 'find', 'resolve', 'handle', 'validate',
  'format', 'render', 'read', 'write', 'open', 'close', 'start', 'stop', 'init', 'register', 'fetch', 'compute', 'apply',
  'merge', 'sync', 'check', 'convert', 'encode', 'decode', 'send', 'receive', 'schedule', 'retry', 'flush', 'lookup',
]; // prettier-ignore

type Language = 'typescript' | 'python' | 'go';
const EXTENSIONS: Record<Language, string> = { typescript: 'ts', python: 'py', go: 'go' };

type GeneratedChunk = { symbol: string; content: string; startLine: number; endLine: number };
type GeneratedFile = { path: string; language: Language; chunks: GeneratedChunk[] };

/** A project's files: deterministic for its number. */
export function generateProject(number: number, chunks: number, vocab = sharedVocabulary()): GeneratedFile[] {
  const random = createRandom(0x5eed + number * 7919);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const common = () => {
    const target = random() * vocab.weights[vocab.weights.length - 1];
    let low = 0;
    let high = vocab.weights.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (vocab.weights[middle] < target) low = middle + 1;
      else high = middle;
    }
    return vocab.words[low];
  };
  const domain = Array.from({ length: 40 }, () => vocab.words[200 + Math.floor(random() * (vocab.words.length - 200))]);
  const word = () => (random() < 0.45 ? pick(domain) : common());
  const cap = (text: string) => text[0].toUpperCase() + text.slice(1);
  const camel = (parts: string[]) => parts[0] + parts.slice(1).map(cap).join('');
  const snake = (parts: string[]) => parts.join('_');
  const language: Language = number % 5 === 3 ? 'python' : number % 5 === 4 ? 'go' : 'typescript';
  const ident = (count = 1 + Math.floor(random() * 2)) => {
    const parts = Array.from({ length: count }, word);
    return language === 'python' ? snake(parts) : camel(parts);
  };
  const sentence = (length: number) => Array.from({ length }, word).join(' ');
  const files: GeneratedFile[] = [];
  const tops = ['src', 'lib', 'internal', 'pkg', 'app'];
  const directories = Array.from({ length: 6 + Math.floor(random() * 10) }, () => `${pick(tops)}/${pick(domain)}`);
  let left = chunks;
  const used = new Set<string>();
  while (left > 0) {
    const size = Math.min(left, 3 + Math.floor(random() * 12));
    left -= size;
    const test = random() < 0.15;
    const base = `${word()}${language === 'go' ? '_' : '-'}${word()}`;
    const name = language === 'python' ? base.replace(/-/g, '_') : base;
    let file =
      test && language === 'typescript'
        ? `test/${name}.test.ts`
        : test && language === 'python'
          ? `tests/test_${name}.py`
          : `${pick(directories)}/${name}${test ? '_test' : ''}.${EXTENSIONS[language]}`;
    // Two files drawn with the same name in one directory: the second gets a number.
    for (let copy = 2; used.has(file); copy += 1) file = file.replace(/(\d*)(\.\w+)$/, `${copy}$2`);
    used.add(file);
    const generated: GeneratedChunk[] = [];
    let line = 1;
    const owner = cap(camel([word(), word()]));
    for (let index = 0; index < size; index += 1) {
      const nameParts = [pick(VERBS), word(), ...(random() < 0.5 ? [word()] : [])];
      const fn = language === 'python' ? snake(nameParts) : language === 'go' ? cap(camel(nameParts)) : camel(nameParts);
      const method = language === 'typescript' && random() < 0.4;
      const params = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ident(1));
      const body: string[] = [];
      for (let statement = 0; statement < 6 + Math.floor(random() * 19); statement += 1) {
        const [a, b, c] = [ident(), ident(), ident(1)];
        const kind = random();
        if (language === 'python') {
          if (kind < 0.4) body.push(`    ${a} = ${pick(params)}.${snake([pick(VERBS), word()])}(${b}, ${c})`);
          else if (kind < 0.6) body.push(`    if not ${a}:`, `        return ${b}`);
          else if (kind < 0.75) body.push(`    for ${c} in ${a}:`, `        ${b}.append(${c})`);
          else if (kind < 0.85) body.push(`    # ${sentence(5 + Math.floor(random() * 6))}`);
          else body.push(`    raise ValueError("${sentence(4)}")`);
        } else if (language === 'go') {
          if (kind < 0.4) body.push(`\t${a} := ${pick(params)}.${cap(camel([pick(VERBS), word()]))}(${b}, ${c})`);
          else if (kind < 0.6) body.push(`\tif err != nil {`, `\t\treturn fmt.Errorf("${sentence(3)}: %w", err)`, '\t}');
          else if (kind < 0.75) body.push(`\tfor _, ${c} := range ${a} {`, `\t\t${b} = append(${b}, ${c})`, '\t}');
          else body.push(`\t// ${sentence(5 + Math.floor(random() * 6))}`);
        } else {
          if (kind < 0.4) body.push(`  const ${a} = ${method ? 'this.' : ''}${pick(params)}.${camel([pick(VERBS), word()])}(${b}, ${c});`);
          else if (kind < 0.6) body.push(`  if (!${a}) {`, `    return ${b};`, '  }');
          else if (kind < 0.75) body.push(`  for (const ${c} of ${a}) {`, `    ${b}.push(${c});`, '  }');
          else if (kind < 0.85) body.push(`  // ${sentence(5 + Math.floor(random() * 6))}`);
          else body.push(`  throw new Error('${sentence(4)}');`);
        }
      }
      const doc = sentence(6 + Math.floor(random() * 8));
      const lines =
        language === 'python'
          ? [`def ${fn}(${params.join(', ')}):`, `    """${cap(doc)}."""`, ...body]
          : language === 'go'
            ? [
                `// ${fn} ${doc}.`,
                `func ${fn}(${params.map((param) => `${param} *${cap(word())}`).join(', ')}) error {`,
                ...body,
                '\treturn nil',
                '}',
              ]
            : [
                `/** ${cap(doc)}. */`,
                `${method ? `  ${fn}` : `export function ${fn}`}(${params.map((param) => `${param}: ${cap(word())}`).join(', ')}) {`,
                ...body,
                '}',
              ];
      const content = lines.join('\n');
      const count = lines.length;
      generated.push({ symbol: method ? `${owner}.${fn}` : fn, content, startLine: line, endLine: line + count - 1 });
      line += count + 1;
    }
    files.push({ path: file, language, chunks: generated });
  }
  return files;
}

let shared: ReturnType<typeof vocabulary> | null = null;
const sharedVocabulary = () => (shared ??= vocabulary());

/** A project's rows as the indexer writes them. */
function projectRows(files: readonly GeneratedFile[], embedder: LexicalEmbedder) {
  const chunkerVersion = chunkerVersionOf('tree-sitter');
  const words = new Map<string, readonly string[]>();
  const stems = new Map<string, string>();
  const chunks = new Map<string, NewChunk>();
  const blobChunks: BlobChunkRow[] = [];
  const fileRows: FileRow[] = [];
  const blobs = new Set<string>();
  for (const file of files) {
    const blob = createHash('sha1')
      .update(file.chunks.map((chunk) => chunk.content).join('\n\n'))
      .digest('hex');
    const variant = `${chunkerVersion}|${embedder.version}|${file.language}`;
    fileRows.push({ path: file.path, blob, variant, role: fileRole(file.path) });
    if (blobs.has(`${blob}|${variant}`)) continue;
    blobs.add(`${blob}|${variant}`);
    for (const [seq, chunk] of file.chunks.entries()) {
      const id = chunkId(chunk, { embedderVersion: embedder.version });
      if (!chunks.has(id)) {
        const terms = identifierTerms(chunkEmbeddingText({ path: file.path, symbol: chunk.symbol, content: chunk.content }), words);
        const vector = embedder.termVector(terms, stems);
        chunks.set(id, {
          id,
          embedderVersion: embedder.version,
          dims: embedder.dimensions,
          vector: vectorBinary(vector.values, vector.scale),
          content: chunk.content,
          searchDocument: tsvectorBinary(searchDocumentOfTerms(terms)),
        });
      }
      blobChunks.push({
        blob,
        variant,
        seq,
        chunkId: id,
        startLine: chunk.startLine,
        endLine: chunk.endLine,
        kind: chunk.symbol.includes('.') ? 'method' : 'function',
        symbol: chunk.symbol,
        language: file.language,
      });
    }
  }
  return { chunks: [...chunks.values()], blobChunks, files: fileRows };
}

export type Fleet = { token: string; projects: Array<{ id: number; fullPath: string }> };

/**
 * The fleet in this database: built where missing (projects `fleet/p0001` …), reused where ready.
 * `log` hears progress every 50 projects.
 */
export async function buildFleet(options: {
  prisma: PrismaClient;
  embedder: LexicalEmbedder;
  shape: FleetShape;
  log: (line: string) => void;
  /** Chunks written per statement, about. Default 1,000. */
  batchChunks?: number;
}): Promise<Fleet & { built: number; seconds: number }> {
  const { prisma, embedder, shape } = options;
  const started = performance.now();
  if (!(await prisma.group.findFirst({ where: { fullPath: GROUP } }))) {
    await createGroup(prisma, { path: GROUP, plan: 'ultimate' });
    await createUser(prisma, { username: USER });
    await buyAddOn(prisma, { groupPath: GROUP, addOn: 'duo_enterprise', seats: 1 });
    await assignSeat(prisma, { groupPath: GROUP, addOn: 'duo_enterprise', username: USER });
    await addMember(prisma, { fullPath: GROUP, username: USER, accessLevel: 'developer' });
  }
  const { token } = await createToken(prisma, { username: USER });
  const projects: Fleet['projects'] = [];
  let built = 0;
  let writing: Promise<void> = Promise.resolve();
  for (let number = 1; number <= shape.projects; number += 1) {
    const fullPath = `${GROUP}/p${String(number).padStart(4, '0')}`;
    let project = await prisma.project.findUnique({ where: { fullPath } });
    const ready =
      project &&
      (await prisma.codeIndex.findFirst({
        where: { projectId: project.id, ref: 'main', state: 'ready', activeSnapshotId: { not: null } },
      }));
    if (project && ready) {
      projects.push({ id: project.id, fullPath });
      continue;
    }
    if (project) await prisma.project.delete({ where: { id: project.id } });
    project = (await createProject(prisma, { fullPath, repository: `/nonexistent/${fullPath}` })).project;
    projects.push({ id: project.id, fullPath });
    // This project's rows are made while the previous one's are written.
    const rows = projectRows(generateProject(number, shape.chunksPerProject), embedder);
    await writing;
    const projectId = project.id;
    writing = writeProject(prisma, { projectId, rows, embedderVersion: embedder.version, batchChunks: options.batchChunks ?? 1000 });
    built += 1;
    if (built % 50 === 0)
      options.log(`  built ${built} projects (up to ${fullPath}) in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  await writing;
  const stored = await storeKeywordIndexes(prisma);
  if (stored) options.log(`  stored the keyword index of ${stored} snapshot(s), as the warm-up after their index runs does`);
  return { token, projects, built, seconds: (performance.now() - started) / 1000 };
}

/**
 * What the API's warm-up does when an index run activates a snapshot (src/search/keyword-warm-up.ts):
 * its keyword index built and stored, for every active snapshot without one of this format.
 */
async function storeKeywordIndexes(prisma: PrismaClient): Promise<number> {
  const missing = await prisma.$queryRawUnsafe<Array<{ projectId: number; snapshotId: bigint }>>(
    `SELECT i.project_id AS "projectId", i.active_snapshot_id AS "snapshotId" FROM code_indexes i
      WHERE i.active_snapshot_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM code_snapshot_keyword_indexes k WHERE k.snapshot_id = i.active_snapshot_id AND k.format = $1)
      ORDER BY i.project_id`,
    KEYWORD_INDEX_FORMAT,
  );
  for (const scope of missing) {
    const index = new LexicalIndex(await snapshotLexicalRows(prisma, scope));
    await storeKeywordIndex(prisma, { snapshotId: scope.snapshotId, format: KEYWORD_INDEX_FORMAT, data: index.serialize() });
  }
  return missing.length;
}

async function writeProject(
  prisma: PrismaClient,
  options: { projectId: number; rows: ReturnType<typeof projectRows>; embedderVersion: string; batchChunks: number },
): Promise<void> {
  const { projectId, rows } = options;
  const index = await prisma.codeIndex.create({ data: { projectId, ref: 'main', state: 'indexing', startedAt: new Date() } });
  const snapshot = await prisma.codeIndexSnapshot.create({
    data: {
      indexId: index.id,
      commitSha: createHash('sha1').update(String(projectId)).digest('hex'),
      chunkerVersion: chunkerVersionOf('tree-sitter'),
      embedderVersion: options.embedderVersion,
      settingsDigest: 'bench-fleet',
    },
  });
  // A project of the graph's size goes into it before its chunks are written, as a full index run's
  // placeVectors does: each batch then adds to the graph, where one statement moving them all there
  // afterwards outlasted any statement limit on the embedded database.
  if (rows.chunks.length >= VECTOR_GRAPH_MIN_CHUNKS) await promoteToVectorGraph(prisma, projectId);
  // Batches of files as the indexer writes them.
  let from = 0;
  while (from < rows.files.length) {
    let to = from;
    const paths = new Set<string>();
    let count = 0;
    while (to < rows.files.length && count < options.batchChunks) {
      paths.add(`${rows.files[to].blob}|${rows.files[to].variant}`);
      count += rows.blobChunks.filter((row) => row.blob === rows.files[to].blob).length;
      to += 1;
    }
    const blobChunks = rows.blobChunks.filter((row) => paths.has(`${row.blob}|${row.variant}`));
    const ids = new Set(blobChunks.map((row) => row.chunkId));
    await storeBatch(prisma, {
      projectId,
      snapshotId: snapshot.id,
      chunks: rows.chunks.filter((chunk) => ids.has(chunk.id)),
      blobChunks,
      files: rows.files.slice(from, to),
    });
    from = to;
  }
  await activateSnapshot(prisma, { indexId: index.id, projectId, snapshot });
  await collectGarbage(prisma, projectId);
}

/** A question about a random function of a project, as bench/search.ts's templates word it. */
export async function symbolOf(prisma: PrismaClient, projectId: number, random: () => number): Promise<{ symbol: string; path: string }> {
  const rows = await prisma.$queryRawUnsafe<Array<{ symbol: string; path: string }>>(
    `SELECT b.symbol, f.path FROM code_index_files f
       JOIN code_indexes i ON i.active_snapshot_id = f.snapshot_id
       JOIN code_blob_chunks b ON b.project_id = f.project_id AND b.blob = f.blob AND b.variant = f.variant
      WHERE i.project_id = $1 AND b.symbol IS NOT NULL`,
    projectId,
  );
  if (!rows.length) throw new Error(`project ${projectId} has no symbols`);
  return rows[Math.floor(random() * rows.length)];
}
