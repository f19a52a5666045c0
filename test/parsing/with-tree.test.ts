import { LineIndex, loadGrammar, parsingStats, withTree } from '../../src/parsing';
import type { Tree } from '../../src/parsing';

const PYTHON = 'import os\n\n\ndef main():\n    print(os.getcwd())\n\n\nclass Config:\n    debug = False\n';

describe('loadGrammar', () => {
  it('loads a grammar once however many callers ask at the same time, and shares one Grammar', async () => {
    expect(parsingStats().grammarLoads.go).toBeUndefined();
    const grammars = await Promise.all(Array.from({ length: 8 }, () => loadGrammar('go')));
    expect(new Set(grammars).size).toBe(1);
    expect(await loadGrammar('go')).toBe(grammars[0]);
    expect(parsingStats().grammarLoads.go).toBe(1);
    expect(parsingStats().runtimeInits).toBe(1);
  });
});

describe('withTree', () => {
  it('hands over a tree of the whole source and frees it afterwards', async () => {
    const types = await withTree('python', PYTHON, (tree) => tree.rootNode.namedChildren.map((node) => node.type));
    expect(types).toEqual(['import_statement', 'function_definition', 'class_definition']);
    expect(parsingStats().liveTrees).toBe(0);
  });

  it('frees the tree when the callback throws', async () => {
    const grammar = await loadGrammar('python');
    expect(() =>
      grammar.withTree(PYTHON, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(parsingStats().liveTrees).toBe(0);
  });

  it('keeps the tree until an async callback settles, then frees it', async () => {
    const grammar = await loadGrammar('python');
    let release!: () => void;
    const pending = grammar.withTree(PYTHON, async (tree) => {
      await new Promise<void>((resolve) => (release = resolve));
      return tree.rootNode.childCount;
    });
    expect(parsingStats().liveTrees).toBe(1);
    release();
    await expect(pending).resolves.toBe(3);
    expect(parsingStats().liveTrees).toBe(0);
  });

  it('parses only the included ranges, keeping the positions of the whole source', async () => {
    const lines = new LineIndex(PYTHON);
    const grammar = await loadGrammar('python');
    const found = grammar.withTree(
      PYTHON,
      (tree: Tree) => tree.rootNode.namedChildren.map((node) => [node.type, node.startPosition.row, node.text]),
      {
        includedRanges: [lines.rangeOfRows(7, 8)],
      },
    );
    expect(found).toEqual([['class_definition', 7, 'class Config:\n    debug = False']]);
  });

  it('does not grow WASM memory over a thousand parses, because every tree is freed', async () => {
    const grammar = await loadGrammar('python');
    const source = PYTHON.repeat(40);
    // Warm up, so the heap reaches its working size before it is measured.
    for (let index = 0; index < 50; index += 1) grammar.withTree(source, (tree) => tree.rootNode.childCount);
    const before = parsingStats().wasmHeapBytes;
    for (let index = 0; index < 1_500; index += 1) grammar.withTree(source, (tree) => tree.rootNode.childCount);
    // Each of these trees holds about 100 KiB; leaked, they would need some 150 MiB.
    expect(parsingStats().wasmHeapBytes - before).toBeLessThanOrEqual(4 * 2 ** 20);
    expect(parsingStats().liveTrees).toBe(0);
  });
});

describe('LineIndex', () => {
  const lines = new LineIndex('first\r\n  second\n\n\tthird');

  it('maps indices to rows and columns and back', () => {
    expect(lines.rowCount).toBe(4);
    expect(lines.pointAt(0)).toEqual({ row: 0, column: 0 });
    expect(lines.pointAt(9)).toEqual({ row: 1, column: 2 });
    expect(lines.indexAt({ row: 3, column: 1 })).toBe(18);
    expect(lines.rowOf(15)).toBe(1);
    expect(lines.rowOf(16)).toBe(2);
  });

  it('reads lines without their line endings, and their indentation', () => {
    expect([0, 1, 2, 3].map((row) => lines.lineText(row))).toEqual(['first', '  second', '', '\tthird']);
    expect([0, 1, 2, 3].map((row) => lines.indentOf(row))).toEqual([0, 2, 0, 1]);
    expect([0, 1, 2, 3].map((row) => lines.isBlank(row))).toEqual([false, false, true, false]);
  });

  it('builds ranges of whole rows for includedRanges', () => {
    expect(lines.rangeOfRows(1, 2)).toEqual({
      startIndex: 7,
      endIndex: 17,
      startPosition: { row: 1, column: 0 },
      endPosition: { row: 3, column: 0 },
    });
    expect(lines.rangeOfRows(3, 3)).toEqual({
      startIndex: 17,
      endIndex: 23,
      startPosition: { row: 3, column: 0 },
      endPosition: { row: 3, column: 6 },
    });
  });
});
