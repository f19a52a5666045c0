import { createHash } from 'node:crypto';
import { LruCache } from '../lru-cache';
import { MAX_ANALYSED_CHARS } from './extract-features';
import { NO_CONTEXT, THREAD_TURNS_READ, type GatekeeperContext, type ThreadTurn } from './context';
import { CONVERSATION, isConversationalTurn } from './conversation';
import type { CodeRegion } from './find-code-regions';
import type { Intent } from './labels';
import { readsAsEnglish } from './language';
import type { GatekeeperOptions } from './options';
import { clearResult, type GatekeeperResult, type IntentScore } from './result';

/** What the text model and the context rule made of a prompt, with what the conversation rules read. */
export type TextVerdict = {
  result: GatekeeperResult;
  /** Intents by probability, the MULTI probability given back, best first. */
  ranked: readonly IntentScore[];
  /** The VAGUE probability on the same scale. */
  vague: number;
  /** The part of the prompt that was read, and the code found in it. */
  analysed: string;
  regions: readonly CodeRegion[];
};

/** The text model with the context rule (classifier.ts): a prompt judged as if it opened the conversation. */
export type TextJudge = (prompt: string, context: GatekeeperContext) => TextVerdict;

const CONVERSATIONAL = clearResult(CONVERSATION, 1);

/** Characters of kept readings per entry of the result cache (`cacheSize`): 1000 entries keep 2 MB of text at most. */
const READING_CHARS = 1000;

/** A follow-up is short; a longer message in a thread says what it wants on its own. */
const MAX_FOLLOW_UP_CHARS = 300;

/** The newest request of a thread: the text it was read from (with what it followed up) and its verdict. */
type ThreadRequest = { text: string; result: GatekeeperResult };

/**
 * The conversation around the text model:
 * 1. A conversational turn (greeting, thanks, farewell, a question about the assistant) is CLEAR
 *    as `CONVERSATION`, whatever the model thinks of it.
 * 2. In a thread whose last exchanges hold a request, a short message with any content is a
 *    follow-up: CLEAR, read together with that request ("What is a monad?" then "Why?"), so its
 *    intent is the one the two make together; when they make two requests, the follow-up's own.
 *    Contentless messages ("hmm", "??", "ok") stay questions for the user.
 * 3. A prompt the text model would stop whose prose is not English is CLEAR: unread, not vague.
 * Everything else is the text model's verdict.
 */
export function readConversation(
  judgeText: TextJudge,
  options: Readonly<GatekeeperOptions>,
): (prompt: string, context: GatekeeperContext) => GatekeeperResult {
  /** The prompt read after `request`, the newest request of its thread (null: none to continue). */
  const readAfter = (prompt: string, context: GatekeeperContext, request: ThreadRequest | null): ThreadRequest => {
    // Only what the model reads is kept as the request's text.
    const read = prompt.slice(0, MAX_ANALYSED_CHARS);
    if (isConversationalTurn(prompt)) return { result: CONVERSATIONAL, text: read };
    const verdict = judgeText(prompt, context);
    const { result } = verdict;
    if (result.status === 'MULTI_INTENT') return { result, text: read };
    if (request !== null && prompt.length <= MAX_FOLLOW_UP_CHARS && !isContentless(prompt)) {
      const text = `${requestPart(request.text)}\n${prompt}`;
      return { result: followUpResult(judgeText(text, { ...context, thread: undefined }), request.result, verdict), text };
    }
    if (result.status !== 'CLEAR' && !readsAsEnglish(verdict.analysed, verdict.regions)) {
      const own = ownIntent(verdict, options);
      return { result: clearResult(own?.intent ?? null, own?.confidence ?? result.confidence), text: read };
    }
    return { result, text: read };
  };

  /**
   * The newest request of the thread: its user messages are read oldest first, each after the
   * request before it, so a chain of follow-ups ("why?", then "give an example") keeps what it
   * continues. A message asked to clarify leaves the request as it was; a conversational turn
   * ends it ("hi" leaves nothing to refer to). Only the last THREAD_TURNS_READ turns are read.
   */
  const newestRequest = (thread: readonly ThreadTurn[]): ThreadRequest | null => {
    let request: ThreadRequest | null = null;
    for (const turn of thread.slice(-THREAD_TURNS_READ)) {
      if (turn.role !== 'user') continue;
      const reading = readTurn(turn.content, request);
      if (reading.result.intent === CONVERSATION) request = null;
      else if (reading.result.status !== 'NEEDS_CLARIFICATION') request = reading;
    }
    return request;
  };

  // Each message of a thread is read again for every later one: the readings are kept (by the
  // message and the text of the request before it), so the next message costs one reading more.
  // Weighed by the text kept: a request may be MAX_ANALYSED_CHARS long, most are a line.
  const readings = new LruCache<string, ThreadRequest>(options.cacheSize * READING_CHARS, (_key, reading) => reading.text.length + 64);
  const readTurn = (content: string, request: ThreadRequest | null): ThreadRequest => {
    const key = createHash('sha256')
      .update(JSON.stringify([request?.text ?? null, content.slice(0, MAX_ANALYSED_CHARS)]))
      .digest('base64');
    const known = readings.get(key);
    if (known !== undefined) return known;
    const reading = readAfter(content, NO_CONTEXT, request);
    readings.set(key, reading);
    return reading;
  };

  return (prompt, context) => readAfter(prompt, context, context.thread?.length ? newestRequest(context.thread) : null).result;
}

/** What of a request is read before its follow-up: what it asks, not all of a long paste. */
const REQUEST_CHARS = 2000;

/** The start of a request, with a fence it leaves open closed: the follow-up after it is prose, not code. */
function requestPart(text: string): string {
  const part = text.length > REQUEST_CHARS ? text.slice(0, REQUEST_CHARS) : text;
  const fences = part.match(/^[ \t]*(```|~~~)/gm) ?? [];
  return fences.length % 2 === 1 ? `${part}\n${fences.at(-1)!.trim()}` : part;
}

/**
 * The follow-up's verdict from the request and follow-up read as one text: two requests mean the
 * follow-up asks its own (its verdict alone when that is clear, else the last request found); one
 * means it continues with that intent; none leaves the request's intent (or, for a request not
 * read, the follow-up's likeliest).
 */
function followUpResult(together: TextVerdict, request: GatekeeperResult, alone: TextVerdict): GatekeeperResult {
  const { result } = together;
  // A message clear on its own that makes a second request with the one before is a new request.
  if (result.status === 'MULTI_INTENT' && alone.result.status === 'CLEAR') return alone.result;
  if (result.status === 'MULTI_INTENT') {
    const last = result.intents.at(-1)!;
    return clearResult(last.intent, last.confidence);
  }
  if (result.intent !== null) return clearResult(result.intent, result.confidence);
  const inherited = request.status === 'MULTI_INTENT' ? request.intents.at(-1)! : request;
  if (inherited.intent !== null && inherited.intent !== CONVERSATION) return clearResult(inherited.intent, inherited.confidence);
  return clearResult(alone.ranked[0].intent, alone.ranked[0].confidence);
}

/**
 * The intent a prompt names once VAGUE is set aside, when it holds at least
 * `contextShareThreshold` of the intent probabilities (the context rule's test); else null.
 */
function ownIntent(verdict: TextVerdict, options: Readonly<GatekeeperOptions>): { intent: Intent; confidence: number } | null {
  const share = verdict.ranked[0].confidence / Math.max(1e-12, 1 - verdict.vague);
  return share >= options.contextShareThreshold ? { intent: verdict.ranked[0].intent, confidence: share } : null;
}

// Words that carry nothing to continue: "hmm", "ok", "??" stay questions for the user even in a thread.
const CONTENTLESS = new Set(
  'ok okay k kk huh well so yes yeah yep no nope lol wow oh ah eh meh hm hmm um uh err erm right sure fine'.split(' '),
);

/** Whether the message holds no word that could carry a request: "hmm", "??", "ok", "...". */
export function isContentless(prompt: string): boolean {
  const words = prompt.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  return words.every((word) => CONTENTLESS.has(word) || /^h+m+$|^u+m+$|^u+h+$/.test(word));
}
