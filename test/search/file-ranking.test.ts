import { queryTerms } from '../../src/search/text-query';
import { fileRole } from '../../src/indexing/file-role';
import { questionIntent, rankFiles, type FileEvidence } from '../../src/search/file-ranking';
import { expandQuestion, synonymsOf } from '../../src/search/synonyms';

const hit = (path: string, score: number, extra: Partial<FileEvidence> = {}): FileEvidence => ({
  path,
  role: null,
  score,
  symbol: null,
  content: '',
  ...extra,
});
const order = (hits: FileEvidence[], question: string) =>
  rankFiles(hits, { question, terms: queryTerms(question) }).map((file) => file.path);

describe('fileRole', () => {
  it.each([
    ['lib/pool.js', 'implementation'],
    ['built/Redis.js', 'implementation'],
    ['src/click/core.py', 'implementation'],
    ['doc/man_docs.go', 'implementation'],
    ['built/Redis.d.ts', 'types'],
    ['typings/index.d.mts', 'types'],
    ['stubs/core.pyi', 'types'],
    ['tests/test_core.py', 'test'],
    ['args_test.go', 'test'],
    ['doc/md_docs_test.go', 'test'],
    ['src/pool.test.ts', 'test'],
    ['src/pool.spec.js', 'test'],
    ['test/unit/pool.js', 'test'],
    ['src/test/java/FooTest.java', 'test'],
    ['README.md', 'docs'],
    ['docs/testing.rst', 'docs'],
    ['site/content/completions/_index.md', 'docs'],
    ['CHANGELOG.md', 'changelog'],
    ['Changes.md', 'changelog'],
    ['CHANGES.rst', 'changelog'],
    ['examples/repo/repo.py', 'example'],
    ['dist/axios.js', 'generated'],
    ['vendor/app.min.js', 'generated'],
  ])('%s is %s', (path, role) => {
    expect(fileRole(path)).toBe(role);
  });
});

describe('questionIntent', () => {
  it('reads which kind of file a question asks for', () => {
    expect(questionIntent('How is the pool drained?')).toEqual({});
    expect(questionIntent('Which tests cover the pool?')).toEqual({ test: true });
    expect(questionIntent('Where are the type declarations of the options?')).toEqual({ types: true });
    expect(questionIntent('Which documentation explains sentinels?')).toEqual({ docs: true });
    expect(questionIntent('What changed in the changelog for 2.0?')).toEqual({ changelog: true });
  });
});

describe('rankFiles', () => {
  it('prefers the implementation over its test, type declarations, docs and changelog at equal evidence', () => {
    const hits = [
      hit('test/pool.test.js', 1),
      hit('lib/pool.d.ts', 1),
      hit('README.md', 1),
      hit('CHANGELOG.md', 1),
      hit('lib/pool.js', 0.8),
    ];
    expect(order(hits, 'How is an idle connection checked before reuse?')[0]).toBe('lib/pool.js');
  });

  it('puts the kind of file asked for first', () => {
    const hits = [hit('lib/pool.js', 1), hit('test/pool.test.js', 0.9), hit('lib/pool.d.ts', 0.9), hit('docs/pool.md', 0.9)];
    expect(order(hits, 'Which tests check connection reuse?')[0]).toBe('test/pool.test.js');
    expect(order(hits, 'Where are the type declarations for connection reuse?')[0]).toBe('lib/pool.d.ts');
    expect(order(hits, 'Which documentation explains connection reuse?')[0]).toBe('docs/pool.md');
  });

  it('adds a damped share of a file’s other chunks to its best one', () => {
    const hits = [hit('lib/a.js', 1), hit('lib/b.js', 0.9), hit('lib/b.js', 0.8), hit('lib/b.js', 0.7)];
    expect(order(hits, 'something else entirely')).toEqual(['lib/b.js', 'lib/a.js']);
    // A single further chunk is not enough to beat a clearly better file.
    expect(order([hit('lib/a.js', 1), hit('lib/b.js', 0.7), hit('lib/b.js', 0.5)], 'something else entirely')[0]).toBe('lib/a.js');
  });

  it('counts question words in the file name, synonyms included', () => {
    const hits = [hit('lib/connection.js', 1), hit('lib/warnings.py', 0.95)];
    expect(order(hits, 'how are deprecation warnings shown?')[0]).toBe('lib/warnings.py');
    expect(order([hit('lib/connection.js', 1), hit('lib/errors.js', 0.95)], 'which err codes exist?')[0]).toBe('lib/errors.js');
    // By the share of the question's words: one word of five in a name does not beat a clearly better file.
    expect(order([hit('src/tax.ts', 1), hit('lib/invoice.rb', 0.9)], 'Where is the VAT amount computed for an invoice line?')[0]).toBe(
      'src/tax.ts',
    );
  });

  it('lends a matching test’s weight to the implementation it is named after or imports', () => {
    const named = [hit('lib/other.go', 0.5), hit('args.go', 0.45), hit('args_test.go', 1)];
    // args.go alone (0.45) would trail lib/other.go (0.5); its test lends it enough to lead.
    expect(order(named, 'how are positional arguments validated?').slice(0, 2)).toEqual(['args.go', 'lib/other.go']);
    const imported = [
      hit('src/pkg/other.py', 0.5),
      hit('src/pkg/core.py', 0.45),
      hit('tests/test_things.py', 1, { content: 'from pkg.core import Context\n' }),
    ];
    expect(order(imported, 'how does the context close resources?')[0]).toBe('src/pkg/core.py');
    // Not when tests are what was asked for.
    expect(order(named, 'which tests check positional arguments?')[0]).toBe('args_test.go');
  });

  it('uses the role recorded at indexing over the one the path suggests', () => {
    expect(rankFiles([hit('lib/a.js', 1, { role: 'generated' })], { question: 'x', terms: [] })[0].role).toBe('generated');
  });
});

describe('synonyms', () => {
  it('are symmetric within a group and never the word itself', () => {
    expect(synonymsOf('promise')).toEqual(expect.arrayContaining(['thenable', 'async']));
    expect(synonymsOf('thenable')).toContain('promise');
    expect(synonymsOf('promise')).not.toContain('promise');
    expect(synonymsOf('zebra')).toEqual([]);
  });

  it('are appended to the question the lexical embedder embeds', () => {
    expect(expandQuestion('where is the config read', ['config', 'read'])).toBe(
      'where is the config read\nconfiguration options opts settings',
    );
    expect(expandQuestion('parse the packet', ['parse', 'packet'])).toBe('parse the packet');
  });
});
