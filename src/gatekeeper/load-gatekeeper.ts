import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors';
import { createClassifier } from './classifier';
import { contextKey, NO_CONTEXT, THREAD_TURNS_READ, type GatekeeperContext } from './context';
import { MAX_ANALYSED_CHARS } from './extract-features';
import type { LinearModel } from './linear-model';
import { LruCache } from '../lru-cache';
import { parseModel } from './model-file';
import { resolveOptions, type GatekeeperOptions } from './options';
import type { GatekeeperResult } from './result';

/** Stage 1 of the chat pipeline, loaded once and shared. */
export type Gatekeeper = {
  /**
   * Synchronous and in-process; repeated prompts (up to case and whitespace) with the same context
   * and thread come from the cache. Without a context the prompt is judged as sent with nothing
   * attached, opening a conversation.
   */
  classify(prompt: string, context?: GatekeeperContext): GatekeeperResult;
  /** The settings in force, defaults filled in. */
  readonly options: Readonly<GatekeeperOptions>;
  /** Entries in the result cache. */
  readonly cacheSize: number;
};

// Several gatekeepers (say, with different thresholds) share one parsed model per file.
const modelsByPath = new Map<string, LinearModel>();

function readModel(modelPath: string): LinearModel {
  const absolute = path.resolve(modelPath);
  let model = modelsByPath.get(absolute);
  if (model === undefined) {
    let json: string;
    try {
      json = readFileSync(absolute, 'utf8');
    } catch (error) {
      throw new AppError({
        code: 'INTERNAL',
        userMessage: 'The chat gatekeeper model could not be loaded',
        internalMessage: `gatekeeper model file ${absolute} could not be read (run npm run train:gatekeeper)`,
        cause: error,
      });
    }
    model = parseModel(json);
    modelsByPath.set(absolute, model);
  }
  return model;
}

/**
 * Prompts that differ only in case or whitespace get one cache entry. Features ignore indentation
 * and blank lines, and case matters to them only in telling camelCase names from words, so the
 * shared answer is the one either prompt would get; a result's `text` excerpts come from
 * whichever prompt was seen first. Only the characters the classifier reads (MAX_ANALYSED_CHARS)
 * make the key, and a long key is kept as its hash: a prompt may be 600,000 characters long.
 */
function cacheKey(prompt: string, context: GatekeeperContext): string {
  const normalized = (text: string) =>
    (text.length > MAX_ANALYSED_CHARS ? text.slice(0, MAX_ANALYSED_CHARS) : text)
      .toLowerCase()
      .replace(/[^\S\n]+/g, ' ')
      .replace(/ ?\n[\s]*/g, '\n')
      .trim();
  // The turns the classifier reads are part of the key, each cut as the prompt is; JSON keeps the parts apart whatever they hold.
  const thread = (context.thread ?? []).slice(-THREAD_TURNS_READ).map((turn) => [turn.role, normalized(turn.content)]);
  const read = thread.length === 0 ? `p${normalized(prompt)}` : `t${JSON.stringify([thread, normalized(prompt)])}`;
  const key = `${contextKey(context)}\u0000${read}`;
  // A hash never holds the NUL every key does, so the two kinds cannot meet.
  return key.length > 256 ? createHash('sha256').update(key).digest('base64') : key;
}

/** Loads the model (once per file) and returns a gatekeeper with its own cache and thresholds. */
export function loadGatekeeper(options: Partial<GatekeeperOptions> = {}): Gatekeeper {
  const resolved = resolveOptions(options);
  const model = resolved.model ?? readModel(resolved.modelPath);
  const classifyUncached = createClassifier(model, resolved);
  const cache = new LruCache<string, GatekeeperResult>(resolved.cacheSize);
  return {
    options: resolved,
    get cacheSize() {
      return cache.size;
    },
    classify(prompt: string, context: GatekeeperContext = NO_CONTEXT): GatekeeperResult {
      const key = cacheKey(prompt, context);
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      const result = classifyUncached(prompt, context);
      cache.set(key, result);
      return result;
    },
  };
}
