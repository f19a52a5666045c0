import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { chunkEmbedSpec } from '../../src/indexing/chunk-embed';
import { ChunkPool, inProcessChunker } from '../../src/indexing/chunk-pool';
import { vectorOfBinary } from '../../src/db/pg-binary';
import { LexicalEmbedder } from '../../src/llm/embedders/lexical.embedder';
import { OpenAiCompatibleEmbedder } from '../../src/llm/embedders/openai-compatible.embedder';

const FIXTURES = path.join(__dirname, 'fixtures');

function fixtureFiles() {
  const files: Array<{ path: string; content: string }> = [];
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) walk(full);
      else files.push({ path: path.relative(FIXTURES, full), content: readFileSync(full, 'utf8') });
    }
  };
  walk(FIXTURES);
  return files;
}

describe('ChunkPool (chunking and embedding in worker threads)', () => {
  let pool: ChunkPool;
  afterEach(async () => pool?.close());

  it('gives exactly what chunking on this thread gives, vectors included, in order', async () => {
    const files = fixtureFiles();
    expect(files.length).toBeGreaterThan(3);
    // A small task size spreads the files over several tasks and both threads.
    pool = new ChunkPool({ threads: 2, taskBytes: 2_000 });
    const spec = chunkEmbedSpec(new LexicalEmbedder());
    const [threaded, local] = await Promise.all([pool.chunkAndEmbed(files, spec), inProcessChunker.chunkAndEmbed(files, spec)]);
    expect(pool.threadCount).toBe(2);
    expect(threaded).toHaveLength(files.length);
    expect(threaded).toEqual(local);
    expect(threaded.flat().length).toBeGreaterThan(files.length);
    expect(threaded.flat().every((chunk) => chunk.vector !== null && vectorOfBinary(chunk.vector).length === 512)).toBe(true);
  });

  it('leaves vectors to the caller when the embedder is a model', async () => {
    pool = new ChunkPool({ threads: 1 });
    const embedder = new OpenAiCompatibleEmbedder({ model: 'm', baseUrl: 'http://127.0.0.1:9/v1', dimensions: 8 });
    const [chunks] = await pool.chunkAndEmbed([{ path: 'a.py', content: 'def f(x):\n    return x\n' }], chunkEmbedSpec(embedder));
    expect(chunks.length).toBe(1);
    expect(chunks[0]).toMatchObject({ kind: 'function', symbol: 'f', vector: null });
    expect(chunks[0].id).toMatch(/^[0-9a-f]{64}$/);
  });

  it('fails a task with a clear error when the thread cannot chunk it, and keeps working', async () => {
    pool = new ChunkPool({ threads: 1 });
    const spec = {
      ...chunkEmbedSpec(new LexicalEmbedder()),
      strategy: 'no-such-strategy' as never,
      lexical: { algorithm: 9 as never, dimensions: -1 },
    };
    await expect(pool.chunkAndEmbed([{ path: 'a.py', content: 'x = 1\n' }], spec)).rejects.toThrow(/chunking failed in a worker thread/);
    const [chunks] = await pool.chunkAndEmbed([{ path: 'a.py', content: 'x = 1\n' }], chunkEmbedSpec(new LexicalEmbedder()));
    expect(chunks).toHaveLength(1);
  });

  it('stops its threads when idle and starts them again on demand', async () => {
    pool = new ChunkPool({ threads: 1, idleMs: 50 });
    await pool.chunkAndEmbed([{ path: 'a.py', content: 'x = 1\n' }], chunkEmbedSpec(new LexicalEmbedder()));
    expect(pool.threadCount).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pool.threadCount).toBe(0);
    const [chunks] = await pool.chunkAndEmbed([{ path: 'b.py', content: 'y = 2\n' }], chunkEmbedSpec(new LexicalEmbedder()));
    expect(chunks[0].path).toBe('b.py');
  });

  it('refuses work once closed', async () => {
    pool = new ChunkPool({ threads: 1 });
    await pool.close();
    await expect(pool.chunkAndEmbed([{ path: 'a.py', content: 'x = 1\n' }], chunkEmbedSpec(new LexicalEmbedder()))).rejects.toThrow(
      /closed/,
    );
  });
});
