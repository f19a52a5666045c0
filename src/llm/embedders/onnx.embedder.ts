import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { FeatureExtractionPipeline } from '@huggingface/transformers';
import { AppError } from '../../errors';
import type { Embedder } from './embedder';

export type OnnxEmbedderOptions = {
  /**
   * A local model directory as Hugging Face exports lay one out for transformers.js: config.json,
   * tokenizer.json, tokenizer_config.json and onnx/model.onnx. Nothing is ever downloaded.
   */
  modelDirectory: string;
  /** The vector size the caller needs (say, the database column's); loading fails if the model gives another. Default: the model's. */
  dimensions?: number;
  /** Texts per model call. Default 32. */
  batchSize?: number;
};

const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'];
const USER_MESSAGE = 'The ONNX embedding model could not be loaded';

function loadError(internalMessage: string, cause?: unknown): AppError {
  return new AppError({ code: 'INTERNAL', userMessage: USER_MESSAGE, internalMessage, cause });
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (stats) => stats.isFile(),
    () => false,
  );
}

// Streamed: model files run to hundreds of megabytes.
async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

// Required on first use, not at import: transformers.js brings onnxruntime and sharp, which a
// service on another embedder never needs.
function transformers(): typeof import('@huggingface/transformers') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for EMBEDDINGS_PROVIDER=onnx, see above
  return require('@huggingface/transformers') as typeof import('@huggingface/transformers');
}

/**
 * A sentence-embedding model run in process by ONNX Runtime (through transformers.js): the
 * feature-extraction pipeline, mean pooling over the attention mask, L2-normalised. Texts longer
 * than the tokenizer's model_max_length are truncated to it.
 */
export class OnnxEmbedder implements Embedder {
  readonly name = 'onnx';
  /** onnx-<directory name>-<first 12 hex of model.onnx's sha256>-<dimensions>: another model file is another version. */
  readonly version: string;
  readonly dimensions: number;
  private readonly extractor: FeatureExtractionPipeline;
  private readonly batchSize: number;

  private constructor(loaded: { extractor: FeatureExtractionPipeline; version: string; dimensions: number; batchSize: number }) {
    this.extractor = loaded.extractor;
    this.version = loaded.version;
    this.dimensions = loaded.dimensions;
    this.batchSize = loaded.batchSize;
  }

  /** Checks the directory, loads the model and embeds one text to learn its vector size. */
  static async load(options: OnnxEmbedderOptions): Promise<OnnxEmbedder> {
    const directory = path.resolve(options.modelDirectory);
    const stats = await stat(directory).catch(() => undefined);
    if (!stats?.isDirectory()) throw loadError(`ONNX embedding model directory ${directory} does not exist or is not a directory`);
    const present = await Promise.all(REQUIRED_FILES.map((file) => isFile(path.join(directory, file))));
    const missing = REQUIRED_FILES.filter((_file, index) => !present[index]);
    if (missing.length > 0) throw loadError(`ONNX embedding model directory ${directory} is missing ${missing.join(', ')}`);

    const digest = await sha256(path.join(directory, 'onnx', 'model.onnx'));
    const { env, pipeline } = transformers();
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
    // transformers.js would otherwise look in its file cache first, which could hand back an older model.
    env.useFSCache = false;
    let extractor: FeatureExtractionPipeline;
    try {
      // An absolute path is no hub model id, so transformers.js reads the directory as it is and
      // env.localModelPath (global to the process) is left alone: two models can load at once.
      extractor = await pipeline('feature-extraction', directory, { device: 'cpu', dtype: 'fp32', local_files_only: true });
    } catch (error) {
      throw loadError(`ONNX embedding model in ${directory} could not be loaded: ${(error as Error).message}`, error);
    }

    let dimensions: number;
    try {
      const [probe] = await embedBatch(extractor, ['dimensions probe']);
      dimensions = probe.length;
    } catch (error) {
      await extractor.dispose();
      throw loadError(`ONNX embedding model in ${directory} loads but cannot embed: ${(error as Error).message}`, error);
    }
    if (options.dimensions !== undefined && options.dimensions !== dimensions) {
      await extractor.dispose();
      throw loadError(
        `ONNX embedding model in ${directory} gives vectors of ${dimensions} dimensions, ${options.dimensions} are configured`,
      );
    }
    const version = `onnx-${path.basename(directory)}-${digest.slice(0, 12)}-${dimensions}`;
    return new OnnxEmbedder({ extractor, version, dimensions, batchSize: options.batchSize ?? 32 });
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      options.signal?.throwIfAborted();
      vectors.push(...(await embedBatch(this.extractor, texts.slice(start, start + this.batchSize))));
    }
    return vectors;
  }

  /** Releases the ONNX Runtime session. */
  async dispose(): Promise<void> {
    await this.extractor.dispose();
  }
}

async function embedBatch(extractor: FeatureExtractionPipeline, texts: readonly string[]): Promise<number[][]> {
  const output = await extractor([...texts], { pooling: 'mean', normalize: true });
  try {
    return output.tolist() as number[][];
  } finally {
    output.dispose();
  }
}
