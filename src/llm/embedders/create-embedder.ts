import type { EmbeddingsConfig } from '../../config';
import type { Embedder } from './embedder';
import { LexicalEmbedder } from './lexical.embedder';
import { OnnxEmbedder } from './onnx.embedder';
import { OpenAiCompatibleEmbedder } from './openai-compatible.embedder';

/** The embedder EMBEDDINGS_PROVIDER names; an ONNX model is loaded (and checked) here, at start. */
export async function createEmbedder(config: EmbeddingsConfig): Promise<Embedder> {
  switch (config.provider) {
    case 'openai':
      return new OpenAiCompatibleEmbedder({
        model: config.model!,
        baseUrl: config.baseUrl,
        apiKey: config.apiKey,
        dimensions: config.dimensions!,
      });
    case 'onnx':
      // onnx.embedder.ts loads @huggingface/transformers (and onnxruntime) only here.
      return OnnxEmbedder.load({ modelDirectory: config.modelDir!, dimensions: config.dimensions });
    default:
      return new LexicalEmbedder({ dimensions: config.dimensions });
  }
}

/**
 * An embedder for vectors stored under `version`: the configured one, or a lexical one of that
 * size (it needs no model). Null when the stored vectors came from a model that is not configured
 * any more; search then falls back to full text until the index is rebuilt.
 */
export function embedderForVersion(current: Embedder, version: string): Embedder | null {
  if (current.version === version) return current;
  const lexical = /^lexical-v([12])-(\d+)$/.exec(version);
  return lexical ? new LexicalEmbedder({ algorithm: Number(lexical[1]) as 1 | 2, dimensions: Number(lexical[2]) }) : null;
}
