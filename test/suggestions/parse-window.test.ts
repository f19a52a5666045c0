import { LineIndex, loadGrammar, parsingStats } from '../../src/parsing';
import { detectIntent } from '../../src/suggestions/detect-intent';
import type { DetectIntentInput } from '../../src/suggestions/detect-intent';
import { parseWindows, windowStartsCleanly } from '../../src/suggestions/parse-window';
import { REALISTIC_FILE_NAMES, realisticSource } from './helpers/realistic-source';
import type { RealisticLanguage } from './helpers/realistic-source';

const WHOLE_FILE = { wholeFileMaxChars: Number.POSITIVE_INFINITY };
// Small enough that the 300-line files below are parsed in windows, as 2,000-line files are by default.
const WINDOWED = { wholeFileMaxChars: 2_000, rowsAbove: 40, rowsBelow: 10 };

const rowsOf = (window: { includedRanges: Array<{ startPosition: { row: number }; endPosition: { row: number } }> }) =>
  window.includedRanges.map((range) => [range.startPosition.row, range.endPosition.row]);

/** Three ways to stand on a row: after its indentation, at its end, and on a new line below it. */
function cursorsOn(source: string, row: number): DetectIntentInput[] {
  const lines = new LineIndex(source);
  const start = lines.lineStart(row);
  const end = lines.lineEnd(row);
  const fileName = '';
  const nextIndent = row < lines.lastRow ? lines.indentOf(row + 1) : 0;
  return [
    {
      fileName,
      contentAboveCursor: source.slice(0, start + lines.indentOf(row)),
      contentBelowCursor: source.slice(start + lines.indentOf(row)),
    },
    { fileName, contentAboveCursor: source.slice(0, end), contentBelowCursor: source.slice(end) },
    {
      fileName,
      contentAboveCursor: `${source.slice(0, end)}\n${' '.repeat(Math.max(nextIndent, lines.indentOf(row)))}`,
      contentBelowCursor: source.slice(end),
    },
  ];
}

describe('parseWindows', () => {
  it('parses small files whole', () => {
    const lines = new LineIndex(realisticSource('typescript', 100));
    expect(parseWindows({ lines, cursorRow: 50, grammar: 'typescript' })).toEqual([]);
  });

  it('frames a window inside a class with the class header and its closing brace', () => {
    const source = realisticSource('java', 2_000);
    const lines = new LineIndex(source);
    const classRow = source.split('\n').findIndex((line) => line.startsWith('public class Service'));
    const [window] = parseWindows({ lines, cursorRow: 1_000, grammar: 'java' });
    expect(window.startRow).toBeLessThanOrEqual(1_000 - 80);
    expect(lines.isBlank(window.startRow - 1)).toBe(true);
    expect(window.endRow).toBeGreaterThanOrEqual(1_000 + 20);
    const ranges = rowsOf(window);
    expect(ranges[0]).toEqual([classRow, classRow + 1]);
    expect(ranges.at(-1)).toEqual([lines.lastRow - 1, lines.lastRow]);
    expect(ranges.length).toBe(3);
  });

  it('brings PHP’s opening tag, without which everything is HTML', () => {
    const lines = new LineIndex(realisticSource('php', 2_000));
    const [window] = parseWindows({ lines, cursorRow: 1_000, grammar: 'php' });
    expect(rowsOf(window)[0]).toEqual([0, 1]);
  });

  it('tries another window when the first starts inside a docstring, and decides as the whole file does', async () => {
    const docstring = Array.from({ length: 6 }, (_, index) => `    Paragraph ${index} of a long docstring, about the loader.`).join('\n\n');
    const body = Array.from({ length: 30 }, (_, index) => `    value_${index} = compute(${index})`).join('\n');
    const source = `import os\n\n\ndef load():\n    """Load things.\n\n${docstring}\n    """\n${body}\n    # now return them all\n    \n`;
    const input = { fileName: 'loader.py', contentAboveCursor: source.slice(0, -1), contentBelowCursor: '\n' };
    const lines = new LineIndex(source);
    const cursorRow = lines.rowOf(input.contentAboveCursor.length);
    const options = { wholeFileMaxChars: 100, rowsAbove: 33 };
    const windows = parseWindows({ lines, cursorRow, grammar: 'python', ...options });
    expect(lines.lineText(windows[0].startRow)).toMatch(/^ {4}Paragraph \d of a long docstring/);
    const grammar = await loadGrammar('python');
    expect(
      grammar.withTree(source, (tree) => windowStartsCleanly(tree, lines, windows[0]), { includedRanges: windows[0].includedRanges }),
    ).toBe(false);
    const decision = await detectIntent(input, options);
    expect(decision).toEqual({
      intent: 'generation',
      generationType: 'comment',
      userInstruction: 'now return them all',
      language: 'python',
    });
    expect(decision).toEqual(await detectIntent(input, WHOLE_FILE));
  });
});

describe('detectIntent on large files', () => {
  it.each(Object.keys(REALISTIC_FILE_NAMES) as RealisticLanguage[])(
    '%s: parsing a window decides as parsing the whole file would, wherever the cursor is',
    async (language) => {
      const source = realisticSource(language, 300, 3);
      const rows = new LineIndex(source).rowCount;
      const mismatches: string[] = [];
      const decided = new Set<string>();
      for (let row = 0; row < rows; row += 3) {
        for (const cursor of cursorsOn(source, row)) {
          const input = { ...cursor, fileName: REALISTIC_FILE_NAMES[language] };
          const windowed = await detectIntent(input, WINDOWED);
          const whole = await detectIntent(input, WHOLE_FILE);
          decided.add(`${whole.intent}:${whole.generationType}`);
          if (JSON.stringify(windowed) !== JSON.stringify(whole))
            mismatches.push(`row ${row}: ${JSON.stringify(windowed)} but whole file ${JSON.stringify(whole)}`);
        }
      }
      expect(mismatches).toEqual([]);
      // The files exercise the rules, not only completions.
      expect([...decided]).toEqual(expect.arrayContaining(['completion:null', 'generation:comment']));
      expect(decided.size).toBeGreaterThanOrEqual(language === 'python' ? 2 : 3);
    },
  );

  it('parses one window, not the file, for a cursor in the middle of 2,000 lines', async () => {
    const source = realisticSource('typescript', 2_000);
    const middle = source.indexOf('\n', Math.floor(source.length / 2)) + 1;
    const before = parsingStats().treesParsed;
    await detectIntent({ fileName: 'big.ts', contentAboveCursor: source.slice(0, middle), contentBelowCursor: source.slice(middle) });
    expect(parsingStats().treesParsed - before).toBe(1);
    expect(parsingStats().liveTrees).toBe(0);
  });

  it('does not grow WASM memory over a thousand and more detections', async () => {
    const source = realisticSource('go', 100);
    const inputs = [20, 50, 80].map((row) => ({ ...cursorsOn(source, row)[2], fileName: 'main.go' }));
    for (const input of inputs) await detectIntent(input);
    const before = parsingStats().wasmHeapBytes;
    for (let index = 0; index < 1_500; index += 1) await detectIntent(inputs[index % inputs.length]);
    expect(parsingStats().wasmHeapBytes - before).toBeLessThanOrEqual(4 * 2 ** 20);
    expect(parsingStats()).toMatchObject({ liveTrees: 0, runtimeInits: 1, grammarLoads: { go: 1 } });
  });
});
