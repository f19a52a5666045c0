/* eslint-disable @typescript-eslint/no-require-imports -- a module loaded afresh under a mocked package.json */
import { MARKDOWN_VERSION, renderMarkdown } from '../../src/chat/render-markdown';

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
