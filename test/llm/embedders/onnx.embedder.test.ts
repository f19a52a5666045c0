/**
 * @jest-environment ./test/helpers/onnx-test-environment.js
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../../src/errors';
import { OnnxEmbedder } from '../../../src/llm/embedders/onnx.embedder';
import { writeTinyOnnxModel } from '../../helpers/tiny-onnx-model';

const cosine = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * b[index], 0);
const norm = (vector: number[]) => Math.sqrt(cosine(vector, vector));

describe('ONNX embedder', () => {
  let root: string;
  let embedder: OnnxEmbedder;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'onnx-embedder-'));
    embedder = await OnnxEmbedder.load({ modelDirectory: await writeTinyOnnxModel({ directory: path.join(root, 'tiny-bert') }) });
  });

  afterAll(async () => {
    await embedder?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it('learns its vector size from the model and names the model file in its version', () => {
    expect(embedder.name).toBe('onnx');
    expect(embedder.dimensions).toBe(16);
    expect(embedder.version).toMatch(/^onnx-tiny-bert-[0-9a-f]{12}-16$/);
  });

  it('gives unit vectors, the same every time', async () => {
    const text = 'export function parseConnection(url: string) {}';
    const [first] = await embedder.embed([text]);
    const [again] = await embedder.embed([text, 'resize the image']);
    expect(first).toHaveLength(16);
    expect(norm(first)).toBeCloseTo(1, 5);
    expect(again).toEqual(first);
  });

  // The tiny model has no attention, only word vectors: sharing words is all it can tell.
  it('puts texts that share words nearer than unrelated ones', async () => {
    const [question, parser, unrelated] = await embedder.embed([
      'how do we parse the connection string?',
      'parse a connection string from the url',
      'resize image width and height',
    ]);
    expect(parser).not.toEqual(unrelated);
    expect(cosine(question, parser)).toBeGreaterThan(cosine(question, unrelated) + 0.1);
  });

  it('embeds more texts than one batch holds, in order', async () => {
    const texts = Array.from(
      { length: 70 },
      (_value, index) => ['parse', 'image', 'queue', 'token', 'cache'].slice(0, 1 + (index % 5)).join(' ') + ' x'.repeat(index % 7),
    );
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(70);
    const oneByOne = await Promise.all([0, 31, 32, 33, 64, 69].map(async (index) => (await embedder.embed([texts[index]]))[0]));
    [0, 31, 32, 33, 64, 69].forEach((index, position) => {
      oneByOne[position].forEach((value, dimension) => expect(vectors[index][dimension]).toBeCloseTo(value, 5));
    });
    expect(await embedder.embed([])).toEqual([]);
  });

  it('stops between batches when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embed(['parse'], { signal: controller.signal })).rejects.toThrow(/abort/i);
  });

  it('refuses a directory that is missing or incomplete, naming it and what is missing', async () => {
    const missing = path.join(root, 'no-such-model');
    await expect(OnnxEmbedder.load({ modelDirectory: missing })).rejects.toThrow(new RegExp(`${missing}.*does not exist`));

    const incomplete = await writeTinyOnnxModel({ directory: path.join(root, 'incomplete') });
    await rm(path.join(incomplete, 'onnx', 'model.onnx'));
    await rm(path.join(incomplete, 'tokenizer.json'));
    const error = (await OnnxEmbedder.load({ modelDirectory: incomplete }).catch((caught: unknown) => caught)) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toBe(`ONNX embedding model directory ${incomplete} is missing tokenizer.json, onnx/model.onnx`);
    expect(error.userMessage).not.toContain(root);
  });

  it('refuses a model file that is not ONNX, and a size other than the one configured', async () => {
    const broken = await writeTinyOnnxModel({ directory: path.join(root, 'broken') });
    await writeFile(path.join(broken, 'onnx', 'model.onnx'), 'not a model');
    await expect(OnnxEmbedder.load({ modelDirectory: broken })).rejects.toThrow(
      new RegExp(`ONNX embedding model in ${broken} could not be loaded`),
    );

    const wide = await writeTinyOnnxModel({ directory: path.join(root, 'wide'), hiddenSize: 24 });
    await expect(OnnxEmbedder.load({ modelDirectory: wide, dimensions: 16 })).rejects.toThrow(
      /gives vectors of 24 dimensions, 16 are configured/,
    );
  });

  it('changes its version when model.onnx changes', async () => {
    const directory = path.join(root, 'retrained');
    const versions: string[] = [];
    for (const seed of [1, 2, 1]) {
      await writeTinyOnnxModel({ directory, seed });
      const loaded = await OnnxEmbedder.load({ modelDirectory: directory, dimensions: 16 });
      versions.push(loaded.version);
      await loaded.dispose();
    }
    expect(versions[1]).not.toBe(versions[0]);
    expect(versions[2]).toBe(versions[0]);
  });
});
