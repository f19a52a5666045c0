/**
 * Turns the text of a doc comment or docstring into a question for the training corpus: the
 * comment markers, tags and markup taken out, the first paragraph's first sentence or two kept.
 * Answers null for what no user would ask: fewer than five words, licence headers, linter and
 * editor directives, TODOs, machine-written notices, commented-out code.
 */

/** Fewest words a question keeps; shorter comments say too little to find their file by. */
export const MIN_QUESTION_WORDS = 5;
/** Most words a question keeps (a first sentence can run on). */
export const MAX_QUESTION_WORDS = 40;

const BOILERPLATE = new RegExp(
  [
    'licen[sc]e|copyright|\\(c\\)\\s*\\d|all rights reserved|spdx',
    'eslint|jshint|jscs|istanbul|prettier|tslint|@ts-|noinspection|nolint|pylint|noqa|type:\\s*ignore|clippy|rustfmt',
    '\\btodo\\b|\\bfixme\\b|\\bxxx\\b|\\bhack\\b',
    'auto-?generated|generated (by|from|with|automatically)|do not (edit|modify)|code generated',
    'go:generate|go:build|\\+build|-\\*-|vim?:|emacs',
    '@(deprecated|internal|private|hidden|ignore)\\b|\\bdeprecated\\b',
  ].join('|'),
  'i',
);

// Tags whose text is the description itself.
const DESCRIPTION_TAG = /^@(fileoverview|file|overview|description|desc|summary|brief|abstract)\b:?\s*/i;
// Where the description ends: a tag, a parameter list, an example, a rule line, a code fence.
const END_OF_DESCRIPTION = new RegExp(
  [
    '^(@\\w+',
    ':(param|parameter|arg|argument|key|type|rtype|return|returns|raises|raise|except|exception|var|ivar|cvar)\\b',
    '(args|arguments|parameters|params|returns?|yields?|raises|examples?|usage|notes?|see also|attributes' +
      '|keyword arguments|errors|panics|safety)\\s*:?\\s*$',
    '#+\\s|-{3,}|={3,}|```|\\.\\.\\s+\\w+::|>>>|\\\\(param|return|brief)\\b)',
  ].join('|'),
  'i',
);

/** The comment's text without its markers: `//`, `///`, `//!`, `#`, `/* … *\/`, leading `*`, docstring quotes. */
export function commentText(raw: string): string {
  let text = raw.replace(/\r\n?/g, '\n');
  // A docstring: an optional prefix, then one or three quotes of either kind.
  const docstring = /^[rRuUbBfF]{0,2}("""|'''|"|')([\s\S]*?)\1\s*$/.exec(text.trim());
  if (docstring) return dedent(docstring[2]);
  text = text.replace(/^\s*\/\*+!?/, '').replace(/\*+\/\s*$/, '');
  const lines = text.split('\n').map((line) =>
    line
      .replace(/^\s*(\/\/[/!]?|#+!?|--|;+)\s?/, '')
      .replace(/^\s*\*(?!\*)\s?/, '')
      .replace(/^\s*=(begin|end)\b.*$/, ''),
  );
  return dedent(lines.join('\n'));
}

function dedent(text: string): string {
  const lines = text.split('\n');
  const indents = lines.filter((line) => line.trim()).map((line) => /^\s*/.exec(line)![0].length);
  const common = indents.length ? Math.min(...indents) : 0;
  return lines.map((line) => line.slice(common).trimEnd()).join('\n');
}

/** Markup a reader does not type: links, code spans, HTML tags, reStructuredText roles, URLs. */
function withoutMarkup(text: string): string {
  return text
    .replace(/\{@(?:link|linkplain|code|literal|see)\s+([^}]*)\}/g, (_, inner: string) => inner.replace(/^[\w.]*#/, '').split(/\s+/)[0])
    .replace(/<\/?[a-zA-Z][^>]*>/g, ' ')
    .replace(/&[a-z]+;/g, ' ')
    .replace(/:[a-z:]+:`~?([^`]*)`/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[`?([^\]`]+)`?\](\[[^\]]*\])?/g, '$1')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/`+/g, '')
    .replace(/\*\*?([^*]+)\*\*?/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The first paragraph of the description: up to a blank line, a tag or a section heading. */
function firstParagraph(text: string): string {
  const kept: string[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) {
      if (kept.length) break;
      continue;
    }
    const described = trimmed.replace(DESCRIPTION_TAG, '');
    if (described !== trimmed) {
      if (described) kept.push(described);
      continue;
    }
    if (END_OF_DESCRIPTION.test(trimmed)) break;
    kept.push(trimmed);
  }
  return kept.join(' ');
}

/** Looks like code rather than prose: many operators and brackets, or statements. */
function looksLikeCode(text: string): boolean {
  const symbols = (text.match(/[;{}=<>()[\]|&$]/g) ?? []).length;
  return symbols / Math.max(text.length, 1) > 0.06 || /=>|\(\);|^\s*(if|for|while|return|var|let|const|import|def|fn)\b/.test(text);
}

const WORD = /[A-Za-z][A-Za-z'-]*/g;

/**
 * The question a comment makes, or null. `symbol` is the name of what the comment documents: a
 * first word that is that name (Go's and Java's convention, "NewRouter returns …") is dropped, as
 * a user asking would not know it: "It" stands in its place.
 */
export function questionFromComment(raw: string, symbol?: string): string | null {
  const text = commentText(raw);
  if (BOILERPLATE.test(text.split('\n\n')[0] ?? '')) return null;
  let paragraph = withoutMarkup(firstParagraph(text));
  if (!paragraph || BOILERPLATE.test(paragraph) || looksLikeCode(paragraph)) return null;
  if (symbol && paragraph.split(/\s+/)[0]?.replace(/[^\w$]/g, '') === symbol)
    paragraph = `It ${paragraph.slice(paragraph.indexOf(' ') + 1)}`;
  const sentences = paragraph.split(/(?<=[.!?])\s+(?=[A-Z(`"'])/);
  let question = '';
  for (const sentence of sentences) {
    question = question ? `${question} ${sentence}` : sentence;
    if ((question.match(WORD) ?? []).length >= 8) break;
  }
  const words = question.split(/\s+/);
  if (words.length > MAX_QUESTION_WORDS) question = `${words.slice(0, MAX_QUESTION_WORDS).join(' ')}`;
  const prose = question.match(WORD) ?? [];
  if (prose.length < MIN_QUESTION_WORDS) return null;
  // Mostly words, not numbers, paths or identifiers strung together.
  if (prose.length / words.length < 0.6) return null;
  return question.trim();
}
