import { questionIntent } from '../../src/search/file-ranking';
import { asksForTests, baseForm, termExpansions, wholeWords } from '../../src/search/query-understanding';
import { queryTerms } from '../../src/search/text-query';

describe('asksForTests: "test" as tests asked for, or as what the code does', () => {
  it.each([
    ['Where are the tests for the connection pool?', true],
    ['Which tests cover the pool?', true],
    ['Which unit tests check that a version set on the parent propagates to subcommands?', true],
    ['Is there a test for the URL parser?', true],
    ['How is the retry logic tested?', true],
    ['Which test helper fakes the ticker?', true],
    ['Where is the test suite for the cluster?', true],
    ['Where are the expected-output tests for the examples?', true],
    ['Which spec covers the router?', true],
    ['Where are the tests that check the pool?', true],
    ['Are there unit tests that cover retries?', true],
    ['Which test that covers the router fails?', true],
    ['How does the pool test that a connection is alive?', false],
    ['How does the pool test a connection before handing it out?', false],
    ['The pool tests whether the socket is still writable: where?', false],
    ['What does the health check test?', false],
    ['How does the pool make sure an idle connection is still alive?', false],
    ['Where is `testOnBorrow` read?', false],
  ])('%s → %s', (question, expected) => {
    expect(asksForTests(question)).toBe(expected);
    // File ranking favours test files only when tests are asked for.
    expect(Boolean(questionIntent(question).test)).toBe(expected);
  });
});

describe('termExpansions: other spellings of a word and base forms the stemmer misses', () => {
  it.each([
    ['postgresql', ['pg', 'postgre', 'postgres', 'psql']],
    // "PostgreSQL" splits as identifiers do: postgre, sql.
    ['postgre', ['pg', 'postgres', 'postgresql', 'psql']],
    ['pg', ['postgre', 'postgres', 'postgresql', 'psql']],
    ['cfg', ['conf', 'config', 'configuration']],
    ['configuration', ['cfg', 'conf', 'config']],
    ['ctx', ['context']],
    ['message', ['msg']],
    ['err', ['error']],
    ['k8s', ['kubernetes']],
    ['auth', ['authentication', 'authorization', 'authn', 'authz']],
    ['authorization', ['auth', 'authentication', 'authn', 'authz']],
    ['repo', ['repository']],
    ['database', ['db']],
    ['env', ['environment']],
    ['arguments', ['args']],
    ['indices', ['index', 'idx']],
    ['aliases', ['alias']],
    ['connection', ['conn']],
    ['pool', []],
    // Words that name an object's own properties are words like any other.
    ['constructor', []],
    ['tostring', []],
    ['__proto__', []],
  ])('%s → %s', (term, words) => {
    expect(termExpansions(term).map((expansion) => expansion.word)).toEqual(words);
  });

  it('weighs a base form as the word itself and another spelling a little less', () => {
    expect(termExpansions('indices')).toEqual([
      { word: 'index', weight: 1 },
      { word: 'idx', weight: 0.8 },
    ]);
    expect(baseForm('children')).toBe('child');
    // The stemmer reaches these already: no base form of its own.
    expect(baseForm('queries')).toBeNull();
    expect(baseForm('connections')).toBeNull();
  });
});

describe('identifier styles in a question', () => {
  it.each([
    ['where is poolSize read?', ['pool', 'size', 'read']],
    ['where is pool_size read?', ['pool', 'size', 'read']],
    ['where is pool-size read?', ['pool', 'size', 'read']],
    ['where is PoolSize read?', ['pool', 'size', 'read']],
  ])('%s → the words the index holds', (question, words) => {
    expect(queryTerms(question).filter((term) => !term.includes('_'))).toEqual(words);
  });
});

describe('wholeWords: names in mixed case with an acronym, as code writes them in one piece', () => {
  it.each([
    ['How does it connect to MySQL?', ['mysql']],
    ['Is PostgreSQL or GraphQL used?', ['postgresql', 'graphql']],
    ['Where is the OAuth token refreshed?', ['oauth']],
    ['Where is parseConnection called?', []],
    ['Where is the URL parsed?', []],
  ])('%s → %s', (question, words) => {
    expect(wholeWords(question)).toEqual(words);
  });
});
