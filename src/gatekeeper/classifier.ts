import { hasContext, NO_CONTEXT, type GatekeeperContext } from './context';
import { readConversation, type TextJudge, type TextVerdict } from './read-conversation';
import { extractFeatures, MAX_ANALYSED_CHARS } from './extract-features';
import { findCodeRegions, type CodeRegion } from './find-code-regions';
import { INTENTS, MULTI_INDEX, VAGUE_INDEX, type Intent } from './labels';
import { predictProbabilities, type LinearModel } from './linear-model';
import type { GatekeeperOptions } from './options';
import { clearResult, freeze, type DetectedIntent, type GatekeeperResult, type IntentScore } from './result';
import { splitClauses, type Clause } from './split-clauses';

type Part = { intent: Intent; confidence: number; start: number; end: number };

/** Intents (indices 0..6 of the label order) by probability, best first. */
function rankIntents(probabilities: Float64Array): IntentScore[] {
  return INTENTS.map((intent, index) => ({ intent, confidence: probabilities[index] })).sort(
    (left, right) => right.confidence - left.confidence,
  );
}

type ScoredClause = { start: number; end: number; ranked: IntentScore[]; vague: number };

/** The code regions of the prompt that fall in a clause, with offsets into the clause. */
function regionsWithin(regions: readonly CodeRegion[], clause: Clause): CodeRegion[] {
  return regions
    .filter((region) => region.end > clause.start && region.start < clause.end)
    .map((region) => ({
      ...region,
      start: Math.max(0, region.start - clause.start),
      end: Math.min(clause.end, region.end) - clause.start,
    }));
}

/** A clause scored on its own, without the multi-intent class (see `findRequests`). */
function scoreClause(model: LinearModel, clause: Clause & { regions: CodeRegion[] }): ScoredClause {
  const probabilities = predictProbabilities(model, extractFeatures(clause.text, clause.regions));
  // MULTI is left out: a clause like "then write tests" borrows the joining word's multi score.
  const single = 1 - probabilities[MULTI_INDEX];
  const ranked = rankIntents(probabilities).map((score) => ({ intent: score.intent, confidence: score.confidence / single }));
  return { start: clause.start, end: clause.end, ranked, vague: probabilities[VAGUE_INDEX] / single };
}

/**
 * Groups scored clauses into requests. A clause the model is not confident about (too short, or
 * only context like "it crashes on empty input") joins the request before it; neighbouring
 * clauses with the same intent are one request.
 */
function findRequests(clauses: readonly ScoredClause[], threshold: number): Part[] {
  const parts: Part[] = [];
  let orphanStart: number | null = null;
  for (const clause of clauses) {
    const best = clause.ranked[0];
    const confident = best.confidence >= threshold && clause.vague < best.confidence;
    const previous = parts.at(-1);
    if (!confident || (previous !== undefined && previous.intent === best.intent)) {
      if (previous !== undefined) previous.end = clause.end;
      else orphanStart ??= clause.start;
      continue;
    }
    parts.push({ intent: best.intent, confidence: best.confidence, start: orphanStart ?? clause.start, end: clause.end });
    orphanStart = null;
  }
  return parts;
}

/** What the whole prompt and its clauses scored, for completing a list of requests. */
type Scores = { clauses: readonly ScoredClause[]; ranked: readonly IntentScore[]; multi: number };

/**
 * The model is sure there are several requests but no two clauses were confident about different
 * ones: add the likeliest other intent of any clause, then of the whole prompt ("explain and test
 * this" has one clause), until there are two. Parts without a clause have start -1.
 */
function completeRequests(found: readonly Part[], { clauses: scored, ranked, multi }: Scores): Part[] {
  const chosen: Part[] = found.map((part) => ({ ...part }));
  const known = (intent: Intent) => chosen.some((part) => part.intent === intent);
  while (chosen.length < 2) {
    let bestIndex = -1;
    let best: IntentScore | null = null;
    for (let index = 0; index < scored.length; index++) {
      const candidate = scored[index].ranked.find((score) => !known(score.intent))!;
      if (best === null || candidate.confidence > best.confidence) {
        best = candidate;
        bestIndex = index;
      }
    }
    if (best === null) {
      const candidate = ranked.find((score) => !known(score.intent))!;
      chosen.push({ intent: candidate.intent, confidence: candidate.confidence / (1 - multi), start: -1, end: -1 });
      continue;
    }
    const clause = scored[bestIndex];
    // A clause that had been folded into the start or end of another request now stands on its own.
    const owner = chosen.find(
      (other) => other.start <= clause.start && clause.end <= other.end && (other.start < clause.start || clause.end < other.end),
    );
    if (owner !== undefined && owner.end === clause.end) owner.end = scored[bestIndex - 1].end;
    else if (owner !== undefined && owner.start === clause.start) owner.start = scored[bestIndex + 1].start;
    chosen.push({ intent: best.intent, confidence: best.confidence, start: clause.start, end: clause.end });
  }
  const position = (part: Part) => (part.start < 0 ? Number.MAX_SAFE_INTEGER : part.start);
  return chosen.sort((left, right) => position(left) - position(right));
}

/** With a codebase attached, a question read as any of these is a question about that codebase. */
const CODEBASE_QUESTION: ReadonlySet<Intent> = new Set(['CODEBASE_SEARCH', 'GENERAL_QUESTION', 'EXPLAIN_CODE']);

/**
 * The context rule: with something to point at, "fix it" or "make it shorter" is a request, not
 * a riddle. The text model calls such prompts VAGUE (sent alone they are), so the VAGUE
 * probability is set aside and the intents decide among themselves: when the best holds at least
 * `contextShareThreshold` of the intent probabilities the prompt is CLEAR; contentless prompts
 * ("hmm", "help", "??") spread it thinly and still need clarification. With a codebase attached
 * and no code selected, open or pasted, a question the text model takes for a general question
 * or an explanation of code is about that codebase: CODEBASE_SEARCH, with the three intents'
 * probabilities together as its share. Null: decide as without context.
 */
function decideWithContext(
  ranked: readonly IntentScore[],
  notIntent: number,
  context: GatekeeperContext,
  pastedCode: boolean,
  options: Readonly<GatekeeperOptions>,
): IntentScore | null {
  const mass = Math.max(1e-12, 1 - notIntent);
  const best = ranked[0];
  const aboutCodebase = context.codebase && !context.selectedText && !context.currentFile && !pastedCode;
  if (aboutCodebase && CODEBASE_QUESTION.has(best.intent)) {
    // All three readings send the question to the codebase: their probabilities add up.
    const share = ranked.filter((score) => CODEBASE_QUESTION.has(score.intent)).reduce((sum, score) => sum + score.confidence, 0) / mass;
    return share >= options.contextShareThreshold ? { intent: 'CODEBASE_SEARCH', confidence: share } : null;
  }
  const share = best.confidence / mass;
  return share >= options.contextShareThreshold ? { intent: best.intent, confidence: share } : null;
}

/**
 * Builds the synchronous, uncached classifier: the whole prompt is scored once; prompts with
 * several clauses also have each clause scored, and MULTI_INTENT is decided from the model's
 * multi-intent probability or from two clauses holding different confident intents. The
 * conversation is then read around that (`readConversation`): conversational turns, follow-ups
 * in their thread, prompts in other languages.
 */
export function createClassifier(
  model: LinearModel,
  options: Readonly<GatekeeperOptions>,
): (prompt: string, context?: GatekeeperContext) => GatekeeperResult {
  const read = readConversation(createTextJudge(model, options), options);
  return (prompt: string, context: GatekeeperContext = NO_CONTEXT) => read(prompt, context);
}

/** The text model and the context rule, as before any conversation is read. */
function createTextJudge(model: LinearModel, options: Readonly<GatekeeperOptions>): TextJudge {
  const alternativesOf = (ranked: IntentScore[], skip: Intent | null) =>
    ranked
      .filter((score) => score.intent !== skip && score.confidence >= options.minAlternativeConfidence)
      .slice(0, options.maxAlternatives)
      .map((score) => ({ intent: score.intent, confidence: score.confidence }));

  return (prompt: string, context: GatekeeperContext): TextVerdict => {
    // Everything below reads the same prefix, so the code in it is found once.
    const analysed = prompt.length > MAX_ANALYSED_CHARS ? prompt.slice(0, MAX_ANALYSED_CHARS) : prompt;
    const regions = findCodeRegions(analysed);
    const probabilities = predictProbabilities(model, extractFeatures(analysed, regions));
    const ranked = rankIntents(probabilities);
    const multi = probabilities[MULTI_INDEX];
    const clauses = splitClauses(analysed, regions);
    const scored =
      clauses.length >= 2 ? clauses.map((clause) => scoreClause(model, { ...clause, regions: regionsWithin(regions, clause) })) : [];
    const parts = findRequests(scored, options.partThreshold);
    const distinct = parts.filter((part, index) => parts.findIndex((other) => other.intent === part.intent) === index);
    const byModel = multi >= options.multiIntentThreshold;
    const byParts = distinct.length >= 2 && multi >= options.multiIntentSupport;

    if (byModel || byParts) {
      const chosen = completeRequests(distinct, { clauses: scored, ranked, multi });
      const intents: DetectedIntent[] = chosen.map((part) => ({
        intent: part.intent,
        confidence: part.confidence,
        text: part.start < 0 ? null : prompt.slice(part.start, part.end).trim(),
      }));
      const confidence = byModel ? multi : Math.min(...distinct.map((part) => part.confidence));
      const result = freeze({ status: 'MULTI_INTENT', intent: null, confidence, intents, alternatives: [] });
      return { result, ranked, vague: probabilities[VAGUE_INDEX], analysed, regions } satisfies TextVerdict;
    }

    // Not several requests, so one (or none): the MULTI probability goes back to the others, as
    // for clauses. "I'm reviewing this and don't follow this part: <code>" is not blocked because
    // its length looks like a multi-part prompt.
    const single = Math.max(1e-12, 1 - multi);
    const best = { intent: ranked[0].intent, confidence: ranked[0].confidence / single };
    const vagueProbability = probabilities[VAGUE_INDEX] / single;
    const singleRanked = ranked.map((score) => ({ intent: score.intent, confidence: score.confidence / single }));
    const judged = (result: GatekeeperResult): TextVerdict => ({
      result,
      ranked: singleRanked,
      vague: vagueProbability,
      analysed,
      regions,
    });
    if (hasContext(context)) {
      const decided = decideWithContext(singleRanked, vagueProbability, context, regions.length > 0, options);
      if (decided !== null) return judged(clearResult(decided.intent, decided.confidence));
    }
    const vague = vagueProbability > best.confidence && vagueProbability >= options.vagueThreshold;
    if (!vague && best.confidence > options.clearThreshold) return judged(clearResult(best.intent, best.confidence));
    if (!vague && best.confidence >= options.confirmThreshold) {
      return judged(
        freeze({
          status: 'NEEDS_CONFIRMATION',
          intent: best.intent,
          confidence: best.confidence,
          intents: [{ ...best, text: null }],
          alternatives: alternativesOf(singleRanked, best.intent),
        }),
      );
    }
    return judged(
      freeze({
        status: 'NEEDS_CLARIFICATION',
        intent: null,
        confidence: best.confidence,
        intents: [],
        alternatives: alternativesOf(singleRanked, null),
      }),
    );
  };
}
