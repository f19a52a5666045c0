import { chooseSnippets, longestRun, questionLiterals, snippetIntent, type SnippetHit } from '../../src/search/choose-snippets';
import { queryTerms } from '../../src/search/text-query';

const lines = (...text: string[]) => text.join('\n');

function hit(startLine: number, score: number, ...text: string[]): SnippetHit {
  return { startLine, endLine: startLine + text.length - 1, content: lines(...text), score, symbol: null };
}

/** The first snippet's first line for a question over a file's chunk hits, as groupHits asks. */
function first(path: string, question: string, hits: SnippetHit[]): number {
  return chooseSnippets(hits, { path, language: null, question, terms: queryTerms(question), intent: snippetIntent(question) })[0]
    .startLine;
}

// A Rust file whose test module names the question's words as often as the code does.
const RUST_WITH_TESTS = [
  hit(
    1,
    0.9,
    '/// Wraps help text at word boundaries to the given width.',
    'pub(crate) fn wrap(content: &str, width: usize) -> String {',
    '    let mut wrapper = WordWrapper::new(width);',
    '    wrapper.wrap(content.split_word_bounds().collect())',
    '}',
  ),
  hit(
    30,
    1,
    '#[cfg(test)]',
    'mod test {',
    '    #[test]',
    '    fn wrap_words_at_width() {',
    '        assert_eq!(wrap("help text words", 5), "help\\ntext\\nwords");',
    '    }',
    '}',
  ),
];

// A pasted message: the chunk that holds it as written comes first, though the one that holds its words
// apart was retrieved better (without the phrase, that one would).
const MESSAGE = [
  hit(
    100,
    1,
    '/// Gets the value of a specific argument or group by id.',
    '/// # Panics: if the id is unknown, for an argument or group alike.',
    'pub fn get_one(&self, id: &str) -> Option<&T> {',
    '    self.get_arg(id).map(|arg| arg.first())',
    '}',
  ),
  hit(
    200,
    0.6,
    'fn get_arg(&self, id: &str) -> Option<&MatchedArg> {',
    '    if !self.valid_args.contains(id) {',
    '        panic!("`{:?}` is not an id of an argument or a group", id);',
    '    }',
    '    self.args.get(id)',
    '}',
  ),
];

// A quoted tag: the chunk that holds it verbatim comes first, though the other holds the question's words
// more often and was retrieved better.
const QUOTED = [
  hit(
    10,
    1,
    'fn write_usage(&self, styled: &mut StyledStr) {',
    '    // The binary name, then the options, then the positional arguments.',
    '    let options = self.cmd.get_opts().filter(|option| option.is_shown());',
    '    styled.push_str(&self.render(options));',
    '}',
  ),
  hit(
    40,
    0.7,
    'fn needs_tag(&self) -> bool {',
    '    self.cmd.get_non_positionals().any(|arg| !arg.is_hide_set())',
    '}',
    'fn push_tag(&self, styled: &mut StyledStr) {',
    '    if self.needs_tag() { styled.placeholder(" [OPTIONS]"); }',
    '}',
  ),
];

// A question's words in a row in a type's doc comment: no pasted message, so the function that computes
// the figures stays first.
const DOC_RUN = [
  hit(
    1,
    0.9,
    '/** Recall at 1, 5 and 10 and MRR of a run, computed over its questions. */',
    'export type RetrievalMetrics = { recallAt1: number; recallAt5: number; recallAt10: number; mrr: number };',
  ),
  hit(
    10,
    1,
    'export function scoreRanks(ranks: Array<number | null>): RetrievalMetrics {',
    '  const recall = (k: number) => ranks.filter((rank) => rank !== null && rank <= k).length / ranks.length;',
    '  const mrr = ranks.reduce((sum, rank) => sum + (rank === null ? 0 : 1 / rank), 0) / ranks.length;',
    '  return { recallAt1: recall(1), recallAt5: recall(5), recallAt10: recall(10), mrr };',
    '}',
  ),
];

// The question's words scattered over a long chunk, or together in a few lines of a short one: the
// short one answers, though the long one was retrieved better.
const filler = (count: number) => Array.from({ length: count }, (_, index) => `  const step${index} = next(step${index - 1});`);
const SCATTERED = [
  hit(
    1,
    1,
    'async function drain(pool) {',
    '  const idle = pool.list();',
    ...filler(12),
    '  await ping(server);',
    ...filler(12),
    '  return connection.close();',
    '}',
  ),
  hit(
    40,
    0.8,
    'async function acquire(pool) {',
    '  const connection = pool.idle.pop();',
    '  await connection.ping();',
    '  return connection;',
    '}',
  ),
];

describe('questionLiterals: what a question quotes or writes as code', () => {
  it.each([
    [
      'try_get_one returns "Could not downcast to ..., need to downcast to ..."; why?',
      ['could not downcast to', 'need to downcast to', 'try_get_one'],
    ],
    ['What placeholders can a help template use, like {usage} and {all-args}?', ['{usage}', '{all-args}']],
    ['When does the usage line show "[OPTIONS]"?', ['[options]']],
    ['How does the parser treat a bare "--"?', ['--']],
    ['Where does crate_version! get the version, and the other crate_* macros?', ['crate_version!', 'crate_']],
    ['How are -v or --verbose mapped to their argument?', ['-v', '--verbose']],
    ['Why does `Connection.query()` fail?', ['connection.query()']],
    ['How is the pool shut down?', []],
    ["What's a well-known port, e.g. 80?", []],
  ])('%s', (question, expected) => {
    expect(questionLiterals(question)).toEqual(expected);
  });
});

describe('longestRun: a pasted message found word for word', () => {
  it.each([
    [['is', 'not', 'an', 'id'], ['panic', 'is', 'not', 'an', 'id', 'of'], 4],
    [['not', 'an', 'id'], ['an', 'id', 'not', 'an'], 2],
    [['a', 'b'], ['c'], 0],
    [['a', 'a', 'a'], ['a', 'a'], 2],
    [[], ['a'], 0],
  ])('%j in %j: %d', (question, text, expected) => {
    expect(longestRun(question, text)).toBe(expected);
  });
});

describe('chooseSnippets: which chunk of a file answers first', () => {
  it.each([
    [
      'the code, not its test module, for a question about behaviour',
      'src/output/wrap.rs',
      'How is help text wrapped at word boundaries?',
      RUST_WITH_TESTS,
      1,
    ],
    [
      'the test module when the question asks for tests',
      'src/output/wrap.rs',
      'Which unit tests check how help text is wrapped?',
      RUST_WITH_TESTS,
      30,
    ],
    [
      'the code when "test" is a verb',
      'src/output/wrap.rs',
      'How does it test that help text is wrapped at word boundaries?',
      RUST_WITH_TESTS,
      1,
    ],
    [
      'the chunk holding a pasted message as written',
      'src/matches.rs',
      'why does it panic saying the id is not an id of an argument or a group?',
      MESSAGE,
      200,
    ],
    [
      "the chunk whose lines hold the question's words together",
      'lib/pool.js',
      'How does the pool ping an idle connection?',
      SCATTERED,
      40,
    ],
    ['the chunk holding what the question quotes', 'src/output/usage.rs', 'When does the usage line show "[OPTIONS]"?', QUOTED, 40],
    [
      "the function, when the question's words in a row are only in a doc comment",
      'src/evaluation/metrics.ts',
      'How are recall at 1, 5 and 10 and MRR computed?',
      DOC_RUN,
      10,
    ],
  ])('%s', (_name, path, question, hits, expected) => {
    expect(first(path, question, hits)).toBe(expected);
  });
});
