import { GRAMMARS, grammarForFileName, loadGrammar, parsingStats, withTree } from '../../src/parsing';
import { extensionOf, languageOf } from '../../src/parsing/languages';
import type { GrammarName } from '../../src/parsing';

// A small, valid program per grammar, with one comment of each kind the grammar knows.
const SNIPPETS: Record<GrammarName, string> = {
  javascript: '// line\n/* block */\nexport function add(a, b) {\n  return a + b;\n}\n',
  typescript: '// line\n/* block */\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n',
  tsx: '// line\n/* block */\nexport const App = () => <div className="app">{1 + 1}</div>;\n',
  python: '# line\ndef add(a, b):\n    return a + b\n',
  ruby: '# line\n=begin\nblock\n=end\ndef add(a, b)\n  a + b\nend\n',
  go: 'package main\n\n// line\n/* block */\nfunc add(a, b int) int {\n\treturn a + b\n}\n',
  java: '// line\n/* block */\nclass Calc {\n  int add(int a, int b) { return a + b; }\n}\n',
  rust: '// line\n/* block */\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n',
  c: '// line\n/* block */\nint add(int a, int b) {\n  return a + b;\n}\n',
  cpp: '// line\n/* block */\nauto add = [](int a, int b) { return a + b; };\n',
  csharp: '// line\n/* block */\nclass Calc {\n  int Add(int a, int b) => a + b;\n}\n',
  php: '<?php\n// line\n# hash\n/* block */\nfunction add($a, $b) {\n  return $a + $b;\n}\n',
  kotlin: '// line\n/* block */\nfun add(a: Int, b: Int): Int {\n    return a + b\n}\n',
};

describe('grammarForFileName', () => {
  it.each([
    ['app.js', 'javascript'],
    ['App.jsx', 'javascript'],
    ['esm.mjs', 'javascript'],
    ['legacy.cjs', 'javascript'],
    ['src/service.ts', 'typescript'],
    ['src\\component.tsx', 'tsx'],
    ['main.py', 'python'],
    ['app.rb', 'ruby'],
    ['main.go', 'go'],
    ['Main.java', 'java'],
    ['lib.rs', 'rust'],
    ['main.c', 'c'],
    ['main.h', 'c'],
    ['main.cc', 'cpp'],
    ['main.cpp', 'cpp'],
    ['main.cxx', 'cpp'],
    ['main.hpp', 'cpp'],
    ['main.hh', 'cpp'],
    ['Program.cs', 'csharp'],
    ['index.php', 'php'],
    ['Main.kt', 'kotlin'],
    ['build.gradle.kts', 'kotlin'],
    ['MAIN.PY', 'python'],
  ])('%s is %s', (fileName, grammar) => {
    expect(grammarForFileName(fileName)).toBe(grammar);
  });

  it.each(['README.md', 'Makefile', 'notes.txt', 'archive.tar.gz', 'src/ts', ''])('%j has no grammar', (fileName) => {
    expect(grammarForFileName(fileName)).toBeNull();
  });

  it.each<[string, string | null, string]>([
    ['src/app.TS', 'typescript', 'ts'],
    ['a\\b/c.d/Dockerfile', 'dockerfile', ''],
    ['dir.d/file', null, ''],
    ['.bashrc', null, 'bashrc'],
    ['ends.', null, ''],
    // Names of Object.prototype's members are no extensions of ours.
    ['x.constructor', null, 'constructor'],
    ['x.__proto__', null, '__proto__'],
  ])('%j is in %j, extension %j', (fileName, language, extension) => {
    expect(languageOf(fileName)).toBe(language);
    expect(extensionOf(fileName)).toBe(extension);
  });

  it('reports TypeScript for both TypeScript grammars', () => {
    expect([GRAMMARS.typescript.language, GRAMMARS.tsx.language]).toEqual(['typescript', 'typescript']);
  });
});

describe('every grammar', () => {
  it.each(Object.keys(GRAMMARS) as GrammarName[])('%s loads from its package and parses real code without errors', async (name) => {
    const grammar = await loadGrammar(name);
    grammar.withTree(SNIPPETS[name], (tree) => {
      expect(tree.rootNode.hasError).toBe(false);
      // The comment query compiles against the grammar (a wrong node type would throw) and finds the comments.
      const comments = grammar.commentsInRows(tree.rootNode, 0, 10).map((node) => node.text.split('\n')[0]);
      expect(comments.length).toBeGreaterThanOrEqual(name === 'python' ? 1 : 2);
      expect(comments.every((text) => /^(\/\/|\/\*|#|=begin)/.test(text))).toBe(true);
    });
  });

  it('was loaded once each, on one runtime, with every tree freed', async () => {
    for (const name of Object.keys(GRAMMARS) as GrammarName[]) await withTree(name, SNIPPETS[name], (tree) => tree.rootNode.childCount);
    const stats = parsingStats();
    expect(stats.runtimeInits).toBe(1);
    expect(stats.grammarLoads).toEqual(Object.fromEntries(Object.keys(GRAMMARS).map((name) => [name, 1])));
    expect(stats.liveTrees).toBe(0);
  });
});
