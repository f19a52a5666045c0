import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });

const ALLOWED = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img'],
  allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'], code: ['class'], pre: ['class'], span: ['class'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow' }) },
};

/** An answer's Markdown as HTML safe to put in a page: raw HTML in the Markdown is escaped, then sanitized. */
export function renderMarkdown(text: string): string {
  return sanitizeHtml(markdown.render(text), ALLOWED);
}
