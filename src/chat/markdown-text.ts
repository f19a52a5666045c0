/**
 * Text that came from a repository, a user or a model, made safe for where it lands in Markdown: it
 * reads as the same characters in any CommonMark or GFM renderer (ours, duo-ui's, an IDE's) and
 * makes no link, image, emphasis, heading, list, table cell or HTML there. The one place answers,
 * their citations and the questions offered about code escape such text; `renderMarkdown` then keeps
 * what Markdown the model wrote, without remote resources.
 */

/**
 * ASCII punctuation CommonMark lets a backslash escape, less the few no construct of CommonMark,
 * GFM or linkify starts or ends with (`,` `;` `'` `"` `?` `%`): what remains covers emphasis, code,
 * links and images, autolinks and linkify's `http:`, `//`, `www.` and `a@b.c`, entities, raw HTML,
 * tables, headings, lists and block quotes.
 */
const MARKDOWN_PUNCTUATION = /[!#$&()*+\-./:<=>@[\\\]^_`{|}~]/g;

/**
 * Line breaks (which would let the text start a block: a heading, a list, a fence) and other
 * control characters, shown as their escape (`\n`, `\u0007`) so the text stays on its line and a
 * reader still sees that the character is there. U+2028/2029 too: some renderers break lines on them.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const NAMED_CONTROLS: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const showControl = (character: string) => NAMED_CONTROLS[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** The text as it is, on one line. */
export const oneLine = (text: string): string => text.replace(CONTROL, showControl);

/**
 * The text as Markdown text: for inline positions (a sentence, link text, emphasis, a heading's or a
 * list item's text). Outer blanks are dropped: leading ones would indent a line into a code block,
 * and either breaks the emphasis around it.
 */
export function markdownText(text: string): string {
  return oneLine(text).trim().replace(MARKDOWN_PUNCTUATION, '\\$&');
}

/**
 * The text as one inline code span that nothing inside can close: the delimiter is one backtick
 * longer than any run of backticks in it, with a space inside each end when the text starts or ends
 * with a backtick or a blank (CommonMark strips one space at each end when both are there, but
 * keeps a span of blanks only as it is). An empty text is one blank: a span cannot be empty.
 */
export function inlineCode(text: string): string {
  const content = oneLine(text) || ' ';
  const delimiter = '`'.repeat(longestRun(content, '`') + 1);
  const padding = /^ *$/.test(content) || !/^[` ]|[` ]$/.test(content) ? '' : ' ';
  return `${delimiter}${padding}${content}${padding}${delimiter}`;
}

/**
 * A fenced code block holding the code as it is: the fence is longer than any run of backticks in
 * it, so no line of the code can close it. `language` is only used when it is a plain name.
 */
export function codeBlock(code: string, language: string | null = null): string {
  const fence = '`'.repeat(Math.max(3, longestRun(code, '`') + 1));
  const info = language && /^[\w+#.-]+$/.test(language) ? language : '';
  // A lone CR ends a line in Markdown too: written as LF, the code's last line break stays its own.
  return `${fence}${info}\n${code.replace(/\r\n?/g, '\n')}\n${fence}`;
}

function longestRun(text: string, character: string): number {
  let longest = 0;
  let current = 0;
  for (const each of text) {
    current = each === character ? current + 1 : 0;
    if (current > longest) longest = current;
  }
  return longest;
}
