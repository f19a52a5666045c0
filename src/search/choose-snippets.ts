import { identifierTerms, stemWord, STOP_WORDS } from '../llm/embedders/terms';
import { asksForTests } from './query-understanding';
import { declaresOnly, snippetShape, type BoilerplateKind, type LineKind } from './boilerplate';
import { synonymsOf } from './synonyms';
import { LruCache } from '../lru-cache';

/**
 * Which lines of a found file are shown and given to the model, and in which order: the file's
 * chunk hits, best first, become at most a few snippets that answer the question, the best first.
 *
 * - A chunk that is only boilerplate (imports, a package line, a re-export list, a license header:
 *   boilerplate.ts) is left out, so the slot goes to the next chunk that holds code; a chunk that
 *   starts with boilerplate is shown from its code on. A file whose only hits are boilerplate keeps
 *   them: it was found for them (a module that only re-exports, a constants list).
 * - A question about that boilerplate ("what does this file import", "which license") gets it, first.
 * - The others are ordered by how well they answer: half their retrieval score (scaled to the
 *   file's best), half the share of the question's words their best WINDOW_LINES lines in a row
 *   hold, the words few of the file's chunks hold weighing more and words only in comments half, plus PHRASE_WEIGHT times the share
 *   of the question's phrases (two meaningful words in a row) they hold as written, plus
 *   LITERAL_WEIGHT times the share of what the question quotes or writes as code ("Could not
 *   downcast to", `{usage}`, [OPTIONS], crate_version!) that they hold verbatim, rarer ones weighing
 *   more, plus RUN_WEIGHT when their code holds a long run of the question's words in its order (a
 *   message pasted into the question: "is not an id of an argument or a group"); a
 *   chunk that only declares (a type of options, struct fields) weighs DECLARATION_WEIGHT unless
 *   the question asks about types, and a test inside a file of code TEST_CHUNK_WEIGHT unless the
 *   question asks for tests (query-understanding.ts).
 * - The best few are kept, those that overlap or touch merged, and the merged snippets ordered by
 *   their best chunk: the first one is what answers best, whatever its line. Each keeps its
 *   retrieval score (what REST and GraphQL show).
 */

export type SnippetHit = { startLine: number; endLine: number; content: string; score: number; symbol: string | null };

/** Which boilerplate the question asks about, and whether it asks about declarations (types, fields): none for most questions. */
export type SnippetIntent = ReadonlySet<BoilerplateKind | 'declarations'>;

const INTENT_PATTERNS: Record<BoilerplateKind | 'declarations', RegExp> = {
  declarations: /\b(types?|interfaces?|fields?|structs?|declarations?|declared|shape|signatures?)\b/i,
  imports:
    /\b(imports?|imported|importing|dependencies|depends on|depend on|#\s*include|include directives?|require calls?|required modules?)\b/i,
  exports: /\b((re-?)?exports?|(re-?)?exported|export lists?|public api)\b/i,
  license: /\b(licen[cs]es?|licen[cs]ed|licensing|copyright|spdx)\b/i,
};

/** The boilerplate a question asks about: its imports, what it exports, its license. */
export function snippetIntent(question: string): SnippetIntent {
  return new Set(
    (Object.keys(INTENT_PATTERNS) as Array<keyof typeof INTENT_PATTERNS>).filter((kind) => INTENT_PATTERNS[kind].test(question)),
  );
}

export type ChooseSnippetsOptions = {
  path: string;
  language: string | null;
  intent: SnippetIntent;
  /** The question's full-text terms (queryTerms): which of the file's chunks hold its rarer words. */
  terms: readonly string[];
  /** The question as asked: its phrases, and whether it asks for tests. Default none. */
  question?: string;
  /** Chunks kept before merging. Default 3. */
  maxPerFile?: number;
};

type Candidate = SnippetHit & { asked: boolean; answer: number };

/**
 * Weights of a chunk's retrieval score (scaled to the file's best) and of the share of the
 * question's words it holds, when ordering a file's chunks.
 */
const RETRIEVAL_WEIGHT = 0.5;
const COVERAGE_WEIGHT = 0.5;

/**
 * Weight of the share of the question's phrases (two meaningful words in a row) a chunk holds as
 * written: a pasted message, a named setting.
 */
const PHRASE_WEIGHT = 0.3;

/**
 * Weight of the share of the question's literals (questionLiterals: quoted text, words written as
 * code) a chunk holds verbatim, each weighted by how few of the file's found chunks hold it.
 */
const LITERAL_WEIGHT = 0.6;

/**
 * Weight of a run of the question's words, in order, in a chunk's code (its comments left out): 0
 * up to MIN_RUN words, full from MIN_RUN + RUN_SPAN words on. Questions and code share runs of two
 * or three words by chance ("of the", "is not"); a pasted message shares more.
 */
const RUN_WEIGHT = 0.6;
const MIN_RUN = 3;
const RUN_SPAN = 4;

/** A test inside a file of code (a Rust test module, a Go example) answers a question that asks for no tests this much less. */
const TEST_CHUNK_WEIGHT = 0.5;

/** A chunk that only declares (boilerplate.ts's declaresOnly) answers a question about behaviour this much less. */
const DECLARATION_WEIGHT = 0.7;

/**
 * Lines of a chunk in which its share of the question's words is counted (its best such window):
 * the words that answer stand together, in one branch or a few lines, where a long chunk holds the
 * same words scattered over unrelated lines.
 */
const WINDOW_LINES = 10;

/** Weight of a question word found only in a chunk's comments and docstrings: prose about code answers less than the code. */
const PROSE_WEIGHT = 0.5;

/**
 * Each word's stemmed terms, across searches: chunks of different code bases share most of their words
 * (splitting and stemming them was about a quarter of a search's CPU when most chunks found were new
 * to readings, as over many projects). Keys are copies, so a word never keeps its chunk's text alive;
 * emptied when it reaches WORD_CACHE_SIZE.
 */
const wordCache = new Map<string, readonly string[]>();
const WORD_CACHE_SIZE = 50_000;

/** The stems of one identifier word (wordCache). */
function stemsOf(word: string): readonly string[] {
  let terms = wordCache.get(word);
  if (terms === undefined) {
    terms = identifierTerms(word).map(stemWord);
    if (wordCache.size >= WORD_CACHE_SIZE) wordCache.clear();
    wordCache.set(Buffer.from(word, 'latin1').toString('latin1'), terms);
  }
  return terms;
}

/** How much a word of the question tells a file's chunks apart: more the fewer of them hold it, none when none does. */
const rarity = (holding: number, chunks: number) => (holding === 0 ? 0 : Math.log(1 + chunks / holding));

/**
 * Marks in `values` (a chunk's lines × the question's words) the lines on which the chunk holds one
 * of `stems`, the forms of word `group`; each worth 1 in code and PROSE_WEIGHT in a comment. Whether
 * it holds any.
 */
function markLines(chunk: ChunkWords, stems: readonly string[], values: Float64Array, group: number, groups: number): boolean {
  let any = false;
  for (const stem of stems) {
    const at = chunk.lineOf.get(stem);
    if (at === undefined) continue;
    any = true;
    for (const line of typeof at === 'number' ? [at] : at) {
      const value = chunk.prose[line] ? PROSE_WEIGHT : 1;
      if (value > values[line * groups + group]) values[line * groups + group] = value;
    }
  }
  return any;
}

/**
 * The stems of the chunks that match a word's forms: each form, and the stems a form of four or more
 * letters starts (as full text matches a prefix: packet → packet_writer), looked up once per file.
 */
function matchingStems(chunks: readonly ChunkWords[], groups: ReadonlyArray<readonly string[]>): string[][] {
  const known = new Set<string>();
  for (const chunk of chunks) for (const stem of chunk.lineOf.keys()) known.add(stem);
  return groups.map((forms) => {
    const stems = new Set(forms);
    for (const form of forms) if (form.length >= 4) for (const stem of known) if (stem.startsWith(form)) stems.add(stem);
    return [...stems];
  });
}

/** A chunk's word stems by line, which lines are comments, its phrases, its code's plain words, and whether it is a test. */
export type ChunkWords = {
  /** Each word stem of the chunk, with the line (0-based) it is on, or its lines (ascending): most stems are on one. */
  lineOf: ReadonlyMap<string, number | readonly number[]>;
  /** Whether each line is a comment or docstring. */
  prose: readonly boolean[];
  /** Stems of words next to each other (stop words left out), as `a b`: a phrase of the question found as written. */
  pairs: ReadonlySet<string>;
  /** Whether the chunk is a test (a test function, a test module) rather than the code it tests. */
  test: boolean;
  /** The plain words of its code (comments left out), in order: where a pasted message is found word for word. */
  plain: readonly string[];
};

function chunkWords(content: string, kinds: readonly LineKind[]): ChunkWords {
  const lines = content.split('\n');
  const prose = lines.map((_, index) => kinds[index] === 'comment');
  const lineOf = new Map<string, number | number[]>();
  lines.forEach((line, index) => {
    for (const word of line.match(/[A-Za-z_$][A-Za-z0-9_$]*|\d+/g) ?? [])
      for (const stem of stemsOf(word)) {
        const at = lineOf.get(stem);
        if (at === undefined) lineOf.set(stem, index);
        else if (typeof at === 'number') {
          if (at !== index) lineOf.set(stem, [at, index]);
        } else if (at[at.length - 1] !== index) at.push(index);
      }
  });
  const code = lines.filter((_, index) => !prose[index]);
  return {
    lineOf,
    prose,
    pairs: wordPairs(content),
    test: TEST_CHUNK.test(content),
    plain: sharedPlainWords(code.join('\n')),
  };
}

/** A test inside a file of code: a Rust test module or function, a Python, Go or JUnit test, a JS/TS test block. */
const TEST_CHUNK = new RegExp(
  [
    /#\[(cfg\()?test\)?\]|^\s*mod tests?\b/.source, // Rust
    /^\s*(async\s+)?def test_?\w*\(/.source, // Python
    /^\s*func (Test|Benchmark|Example)\w*\(/.source, // Go
    /@Test\b/.source, // JUnit
    /^\s*(describe|it|test)\(\s*['"`]/.source, // Jest, Mocha
  ].join('|'),
  'm',
);

/** Consecutive meaningful words of a text, stemmed, as `a b` pairs. */
function wordPairs(text: string): Set<string> {
  const words = identifierTerms(text)
    .filter((word) => !word.includes('_') && !STOP_WORDS.has(word))
    .map(stemWord);
  const pairs = new Set<string>();
  for (let index = 1; index < words.length; index += 1) pairs.add(`${words[index - 1]} ${words[index]}`);
  return pairs;
}

/**
 * How much of the question each chunk holds, in its best WINDOW_LINES lines: its words weighted by
 * how few of the file's found chunks hold them (a word in every chunk of the file tells them apart
 * no more than none), words only in comments weighing PROSE_WEIGHT: 0 to 1.
 */
function coverage(chunks: readonly ChunkWords[], terms: readonly string[]): number[] {
  const groups = terms.map((term) => [...new Set([term, ...synonymsOf(term)].map(stemWord))]);
  // Per chunk, line by line, how much each of the question's words is there; and which words it holds at all.
  const stems = matchingStems(chunks, groups);
  const found = chunks.map((chunk) => {
    const values = new Float64Array(chunk.prose.length * groups.length);
    const holds = stems.map((forms, group) => markLines(chunk, forms, values, group, groups.length));
    return { values, holds, lines: chunk.prose.length };
  });
  const weights = groups.map((_, group) => rarity(found.filter((chunk) => chunk.holds[group]).length, chunks.length));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (total === 0) return chunks.map(() => 0);
  return found.map((chunk) => windowShare(chunk.values, chunk.lines, weights) / total);
}

/**
 * The most of the question's weighted words any WINDOW_LINES lines in a row hold (values: lines ×
 * words): the best window starts on a line that holds one of them.
 */
function windowShare(values: Float64Array, lines: number, weights: readonly number[]): number {
  const groups = weights.length;
  let best = 0;
  for (let start = 0; start < lines; start += 1) {
    let starts = false;
    for (let group = 0; group < groups && !starts; group += 1) starts = values[start * groups + group] > 0;
    if (!starts) continue;
    let held = 0;
    const end = Math.min(lines, start + WINDOW_LINES);
    for (let group = 0; group < groups; group += 1) {
      let most = 0;
      for (let line = start; line < end && most < 1; line += 1) most = Math.max(most, values[line * groups + group]);
      held += most * weights[group];
    }
    best = Math.max(best, held);
  }
  return best;
}

/** The share of the question's phrases (pairs of meaningful words in a row) a chunk holds as written. */
function phraseShare(chunk: ChunkWords, pairs: readonly string[]): number {
  return pairs.length ? pairs.filter((pair) => chunk.pairs.has(pair)).length / pairs.length : 0;
}

/** Plain words of a text, lowercased, in order: what a pasted message and the code's text share word for word. */
function plainWords(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/**
 * One copy of each plain word across the chunks read (kept readings hold many arrays of the same
 * words): emptied when it reaches WORD_CACHE_SIZE, as wordCache is.
 */
const plainCopies = new Map<string, string>();

/** plainWords, each word the one copy kept in plainCopies. */
function sharedPlainWords(text: string): string[] {
  return plainWords(text).map((word) => {
    let copy = plainCopies.get(word);
    if (copy === undefined) {
      if (plainCopies.size >= WORD_CACHE_SIZE) plainCopies.clear();
      copy = Buffer.from(word, 'latin1').toString('latin1');
      plainCopies.set(copy, copy);
    }
    return copy;
  });
}

/** The longest run of the question's words, in its order, that a text's words hold word for word. */
export function longestRun(question: readonly string[], text: readonly string[]): number {
  const positions = new Map<string, number[]>();
  question.forEach((word, at) => positions.set(word, [...(positions.get(word) ?? []), at]));
  let best = 0;
  // Run lengths ending at the previous word of the text, by the question position it matched.
  let previous = new Map<number, number>();
  for (const word of text) {
    const current = new Map<number, number>();
    for (const at of positions.get(word) ?? []) {
      const length = (previous.get(at - 1) ?? 0) + 1;
      current.set(at, length);
      best = Math.max(best, length);
    }
    previous = current;
  }
  return best;
}

/** The share a run of the question's words counts for: RUN_SPAN steps above MIN_RUN words, at most 1. */
const runShare = (length: number) => Math.min(1, Math.max(0, length - MIN_RUN) / RUN_SPAN);

/**
 * What a question quotes or writes as code, lowercased: the text of "…", “…” and `…` spans (split at
 * ellipses: "Could not downcast to ..., need to downcast to ..."), and words with code punctuation
 * ({usage}, [OPTIONS], crate_version!, try_get_one, --verbose, query()); a trailing * (crate_*) is
 * left out, so the prefix matches.
 */
export function questionLiterals(question: string): string[] {
  const literals = new Set<string>();
  for (const match of question.matchAll(/[`"“”]([^`"“”]+)[`"“”]/g))
    for (const part of match[1].split(/\.\.\.|…/)) {
      const text = part
        .replace(/^[\s,;.]+|[\s,;.]+$/g, '')
        .toLowerCase()
        .replace(/\s+/g, ' ');
      if ((text.length >= 2 && /[a-z0-9]/.test(text)) || /^[-=<>!|&.:{}[\]]{2,}$/.test(text)) literals.add(text);
    }
  for (const word of question.replace(/[`"“”][^`"“”]*[`"“”]/g, ' ').split(/\s+/)) {
    const token = word.replace(/^[(,;:'?!.]+|[),;:'?.]+$/g, '').replace(/\*+$/, '');
    if (/[a-z0-9]/i.test(token) && /[{}[\]!_<>]|::|^-{1,2}\w|\w\(\)$/.test(token)) literals.add(token.toLowerCase());
  }
  return [...literals];
}

/**
 * How much of the question's literals each chunk holds verbatim (case aside), each weighted by how
 * few of the file's found chunks hold it, as coverage weighs words: 0 to 1.
 */
function literalShares(contents: readonly string[], literals: readonly string[]): number[] {
  if (!literals.length) return contents.map(() => 0);
  const lowered = contents.map((content) => content.toLowerCase());
  const found = literals.map((literal) => lowered.map((content) => content.includes(literal)));
  const weights = found.map((holds) => rarity(holds.filter(Boolean).length, contents.length));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return contents.map((_, chunk) =>
    total === 0 ? 0 : found.reduce((sum, holds, literal) => sum + (holds[chunk] ? weights[literal] : 0), 0) / total,
  );
}

function trimmed(hit: SnippetHit, leading: number): SnippetHit {
  if (leading === 0) return hit;
  return { ...hit, startLine: hit.startLine + leading, content: hit.content.split('\n').slice(leading).join('\n') };
}

function merge(a: Candidate, b: Candidate): Candidate {
  const lines = new Map<number, string>();
  for (const snippet of [a, b]) snippet.content.split('\n').forEach((line, index) => lines.set(snippet.startLine + index, line));
  const startLine = Math.min(a.startLine, b.startLine);
  const endLine = Math.max(a.endLine, b.endLine);
  const content: string[] = [];
  for (let line = startLine; line <= endLine; line += 1) content.push(lines.get(line) ?? '');
  return {
    startLine,
    endLine,
    content: content.join('\n'),
    score: Math.max(a.score, b.score),
    symbol: a.score >= b.score ? a.symbol : b.symbol,
    asked: a.asked || b.asked,
    answer: Math.max(a.answer, b.answer),
  };
}

/**
 * A chunk's lines read as code, comment or boilerplate, and its words: the same for every question,
 * and the chunks a search finds come back in the next searches of the code base, so the reading of
 * the last 16 million characters of chunks is kept (it was most of a search's CPU at 25,000 chunks).
 */
const readings = new LruCache<string, { shape: ReturnType<typeof snippetShape>; words: ChunkWords }>(16_000_000, (key) => key.length);

function readChunk(hit: SnippetHit, options: ChooseSnippetsOptions): { shape: ReturnType<typeof snippetShape>; words: ChunkWords } {
  const key = `${options.path}\0${options.language ?? ''}\0${hit.content}`;
  let reading = readings.get(key);
  if (!reading) {
    const shape = snippetShape({ content: hit.content, language: options.language, path: options.path });
    reading = { shape, words: chunkWords(hit.content, shape.lines) };
    readings.set(key, reading);
  }
  return reading;
}

/** What snippet choice reads of a question: the same for every file of a search's answer. */
type QuestionReading = { pairs: string[]; literals: string[]; words: string[]; testsAsked: boolean };

/** The reading of the last question, kept: a search chooses the snippets of each of its files with the same question. */
let lastReading: { question: string; reading: QuestionReading } | undefined;

function readQuestion(question: string): QuestionReading {
  if (lastReading?.question !== question)
    lastReading = {
      question,
      reading: {
        pairs: [...wordPairs(question)],
        literals: questionLiterals(question),
        words: plainWords(question),
        testsAsked: asksForTests(question),
      },
    };
  return lastReading.reading;
}

/** A file's snippets for a question, from its chunk hits (best first): best first, merged, without boilerplate no one asked for. */
export function chooseSnippets(hits: readonly SnippetHit[], options: ChooseSnippetsOptions): SnippetHit[] {
  const maxPerFile = options.maxPerFile ?? 3;
  const code: Candidate[] = [];
  const boilerplate: Candidate[] = [];
  const read = hits.map((hit) => readChunk(hit, options));
  const shapes = read.map((reading) => reading.shape);
  const covered = coverage(
    read.map((reading) => reading.words),
    options.terms,
  );
  const best = Math.max(0, ...hits.map((hit) => hit.score));
  const { pairs, literals, words: questionWords, testsAsked } = readQuestion(options.question ?? '');
  const literal = literalShares(
    hits.map((hit) => hit.content),
    literals,
  );
  hits.forEach((hit, index) => {
    const shape = shapes[index];
    const declarations = !options.intent.has('declarations') && declaresOnly({ content: hit.content, lines: shape.lines });
    const answer =
      (RETRIEVAL_WEIGHT * (best > 0 ? hit.score / best : 0) +
        COVERAGE_WEIGHT * covered[index] +
        PHRASE_WEIGHT * phraseShare(read[index].words, pairs) +
        LITERAL_WEIGHT * literal[index] +
        RUN_WEIGHT * runShare(longestRun(questionWords, read[index].words.plain))) *
      (declarations ? DECLARATION_WEIGHT : 1) *
      (read[index].words.test && !testsAsked ? TEST_CHUNK_WEIGHT : 1);
    if (shape.boilerplate) {
      const asked = [...shape.of].some((kind) => options.intent.has(kind));
      (asked ? code : boilerplate).push({ ...hit, asked, answer });
    } else {
      // Asked-for boilerplate at the top of a chunk stays: the import question wants the imports.
      const askedForBoilerplate = [...options.intent].some((kind) => kind !== 'declarations');
      code.push({ ...(askedForBoilerplate ? hit : trimmed(hit, shape.leading)), asked: false, answer });
    }
  });
  const chosen = (code.length ? code : boilerplate)
    .sort((a, b) => Number(b.asked) - Number(a.asked) || b.answer - a.answer)
    .slice(0, maxPerFile);
  const merged: Candidate[] = [];
  for (const snippet of [...chosen].sort((a, b) => a.startLine - b.startLine)) {
    const last = merged[merged.length - 1];
    if (last && snippet.startLine <= last.endLine + 1) merged[merged.length - 1] = merge(last, snippet);
    else merged.push(snippet);
  }
  return merged
    .sort((a, b) => Number(b.asked) - Number(a.asked) || b.answer - a.answer || a.startLine - b.startLine)
    .map(({ asked: _asked, answer: _answer, ...snippet }) => snippet);
}
