import type sanitizeHtml from 'sanitize-html';

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
  renderer = {
    markdown: new MarkdownItClass({ html: false, linkify: true, breaks: false }),
    sanitize,
    allowed: {
      allowedTags: [...sanitize.defaults.allowedTags, 'img'],
      allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'], code: ['class'], pre: ['class'], span: ['class'] },
      allowedSchemes: ['http', 'https', 'mailto'],
      transformTags: { a: sanitize.simpleTransform('a', { rel: 'noopener noreferrer nofollow' }) },
    },
  };
  return renderer;
}

/** An answer's Markdown as HTML safe to put in a page: raw HTML in the Markdown is escaped, then sanitized. */
export function renderMarkdown(text: string): string {
  const { markdown, sanitize, allowed } = load();
  return sanitize(markdown.render(text), allowed);
}
