import { chooseSnippets, snippetIntent, type SnippetHit } from '../../src/search/choose-snippets';
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
  ])('%s', (_name, path, question, hits, expected) => {
    expect(first(path, question, hits)).toBe(expected);
  });
});
