import { normalizePrompt } from '../dataset';
import { INTENTS, type Intent, type Label } from '../../labels';
import { createRandom } from '../../../random';
import { SLOTS } from './slots';
import { CODE_SNIPPETS, STACK_TRACES } from './snippets';
import { CLAUSES, INTENT_TEMPLATES, MULTI_FRAMES, THIRD_FRAMES, VAGUE_PREFIXES, VAGUE_PROMPTS, VAGUE_SUFFIXES } from './templates';

export type GeneratedPrompt = { text: string; label: Label; intents?: Intent[] };

/** How many prompts of each kind to generate. */
export type GeneratorOptions = {
  /** Default 20240601: changing it regenerates every prompt. */
  seed: number;
  /** Prompts per intent. Default 110. */
  perIntent: number;
  /** Vague prompts. Default 120. */
  vague: number;
  /** Multi-intent prompts. Default 220. */
  multi: number;
};

export const DEFAULT_GENERATOR_OPTIONS: Readonly<GeneratorOptions> = Object.freeze({
  seed: 20240601,
  perIntent: 110,
  vague: 120,
  multi: 220,
});

type Random = () => number;
const CODE_MARK = '\u0000code\u0000';
const TRACE_MARK = '\u0000trace\u0000';

const pick = <T>(items: readonly T[], random: Random): T => items[Math.floor(random() * items.length)];

function fillSlots(template: string, random: Random): string {
  let text = template;
  for (let depth = 0; depth < 4 && /\{[a-zA-Z]\w*\}/.test(text); depth++) {
    text = text.replace(/\{([a-zA-Z]\w*)\}/g, (whole, name: string) => {
      if (name === 'code') return CODE_MARK;
      if (name === 'trace') return TRACE_MARK;
      const values = SLOTS[name];
      if (values === undefined) throw new Error(`template "${template}" uses unknown slot ${whole}`);
      return pick(values, random);
    });
  }
  return text;
}

// People abbreviate and mistype; the character n-grams should learn that "expln" is "explain".
const SHORT_FORMS: Readonly<Record<string, readonly string[]>> = {
  please: ['pls', 'plz'],
  function: ['fn', 'func'],
  you: ['u'],
  what: ['wht', 'wat'],
  explain: ['expln', 'explian'],
  thanks: ['thx'],
  repository: ['repo'],
  does: ['dose', 'does'],
  tests: ['tsts', 'testz'],
  write: ['wrte', 'writ'],
  refactor: ['refactr', 'refacor'],
  where: ['wher', 'were'],
  because: ['bc'],
};

function typo(word: string, random: Random): string {
  const at = 1 + Math.floor(random() * (word.length - 2));
  switch (Math.floor(random() * 4)) {
    case 0:
      return word.slice(0, at) + word.slice(at + 1);
    case 1:
      return word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2);
    case 2:
      return word.slice(0, at) + word[at] + word.slice(at);
    default:
      return word[0] + word.slice(1).replace(/[aeiou]/g, '');
  }
}

function roughen(text: string, random: Random): string {
  let words = text.split(' ');
  if (random() < 0.25) words = words.map((word) => (SHORT_FORMS[word] && random() < 0.7 ? pick(SHORT_FORMS[word], random) : word));
  if (random() < 0.2) {
    const candidates = words.map((word, index) => (/^[a-z]{4,}$/.test(word) ? index : -1)).filter((index) => index >= 0);
    if (candidates.length > 0) {
      const index = pick(candidates, random);
      words[index] = typo(words[index], random);
    }
  }
  let result = words.join(' ');
  if (random() < 0.5) result = result.charAt(0).toUpperCase() + result.slice(1);
  if (random() < 0.15) {
    const suffix = pick([' pls', ' please', ' thanks', ' thx', '!', ' asap', ' :)', ' ty'], random);
    const mark = result.indexOf('\u0000');
    result = mark < 0 ? result + suffix : result.slice(0, mark) + suffix + result.slice(mark);
  }
  return result;
}

function codeBlock(random: Random): string {
  const snippet = pick(CODE_SNIPPETS, random);
  const style = random();
  if (style < 0.5) return `:\n\`\`\`${snippet.language}\n${snippet.code}\n\`\`\``;
  if (style < 0.8) return `\n\n${snippet.code}`;
  return `\n\`\`\`\n${snippet.code}\n\`\`\`\n`;
}

function traceBlock(random: Random): string {
  const trace = pick(STACK_TRACES, random);
  return random() < 0.4 ? `\n\`\`\`\n${trace}\n\`\`\`\n` : `\n${trace}\n`;
}

function attachBlocks(text: string, random: Random, codeChance: number): string {
  return text
    .replace(CODE_MARK, () => (random() < codeChance ? codeBlock(random) : ''))
    .replace(TRACE_MARK, () => traceBlock(random))
    .trim();
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function multiPrompt(random: Random): GeneratedPrompt {
  const first = pick(INTENTS, random);
  let second = pick(INTENTS, random);
  while (second === first) second = pick(INTENTS, random);
  const intents: Intent[] = [first, second];
  let firstIsAboutCode = false;
  const clause = (intent: Intent, position: number) => {
    let template = pick(CLAUSES[intent], random);
    if (position === 0) firstIsAboutCode = template.includes('{target}');
    // "it" only makes sense when the first request pointed at some code.
    else if (firstIsAboutCode && random() < 0.45) template = template.replace('{target}', 'it');
    return fillSlots(template, random);
  };
  const a = clause(first, 0);
  const b = clause(second, 1);
  const frame = pick(MULTI_FRAMES, random);
  let text = frame.replace('{a}', a).replace('{b}', b).replace('{A}', capitalize(a)).replace('{B}', capitalize(b));
  if (random() < 0.15) {
    let third = pick(INTENTS, random);
    while (intents.includes(third)) third = pick(INTENTS, random);
    intents.push(third);
    const thirdFrame = frame.startsWith('1.') ? THIRD_FRAMES[3] : pick(THIRD_FRAMES.slice(0, 3), random);
    text = thirdFrame.replace('{prompt}', text.replace(/[.?]$/, '')).replace('{c}', clause(third, 2));
  }
  if (random() < 0.2) text += CODE_MARK;
  return { text: attachBlocks(roughen(text, random), random, 1), label: 'MULTI', intents };
}

function vaguePrompt(random: Random): GeneratedPrompt {
  if (random() < 0.08) return { text: codeBlock(random).replace(/^:/, '').trim(), label: 'VAGUE' };
  const text = `${pick(VAGUE_PREFIXES, random)}${pick(VAGUE_PROMPTS, random)}${pick(VAGUE_SUFFIXES, random)}`;
  return { text: random() < 0.3 ? capitalize(text) : text, label: 'VAGUE' };
}

function intentPrompt(intent: Intent, random: Random): GeneratedPrompt {
  if (intent === 'FIX_CODE' && random() < 0.05) return { text: traceBlock(random).trim(), label: intent };
  const text = roughen(fillSlots(pick(INTENT_TEMPLATES[intent], random), random), random);
  return { text: attachBlocks(text, random, 0.5), label: intent };
}

/**
 * Expands the templates into labelled prompts: intents, vague prompts and multi-intent prompts
 * built from clauses of two or three different intents. Deterministic for a seed; duplicates
 * (after normalising case and whitespace) are skipped.
 */
export function generatePrompts(options: Partial<GeneratorOptions> = {}): GeneratedPrompt[] {
  const settings = { ...DEFAULT_GENERATOR_OPTIONS, ...options };
  const random = createRandom(settings.seed);
  const seen = new Set<string>();
  const prompts: GeneratedPrompt[] = [];
  const collect = (count: number, make: () => GeneratedPrompt) => {
    let added = 0;
    for (let attempt = 0; added < count && attempt < count * 20; attempt++) {
      const prompt = make();
      const key = normalizePrompt(prompt.text);
      if (seen.has(key)) continue;
      seen.add(key);
      prompts.push(prompt);
      added++;
    }
  };
  for (const intent of INTENTS) collect(settings.perIntent, () => intentPrompt(intent, random));
  collect(settings.vague, () => vaguePrompt(random));
  collect(settings.multi, () => multiPrompt(random));
  return prompts;
}
