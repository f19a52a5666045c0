import { learnVocabulary, type MinedCommentRecord } from '../../../src/search/training/learn-vocabulary';
import { queryGroups } from '../../../src/search/lexical-search';
import { learnedPartsOf, useQueryVocabulary, DEFAULT_VOCABULARY } from '../../../src/search/vocabulary';
import { synonymsOf } from '../../../src/search/synonyms';

// Comments of five packages: "callback" sits beside `cb` in each, "socket" beside `fd` in two only,
// and filler comments give the counts a background.
function corpus(): Map<string, MinedCommentRecord[]> {
  const packages = new Map<string, MinedCommentRecord[]>();
  for (const name of ['alpha', 'beta', 'gamma', 'delta', 'epsilon']) {
    const records: MinedCommentRecord[] = [];
    for (let index = 0; index < 4; index += 1) {
      records.push({
        question: 'Invokes the callback once the request has finished.',
        identifiers: ['finishRequest', 'cb', `request${name}`],
      });
    }
    if (name === 'alpha' || name === 'beta')
      for (let index = 0; index < 6; index += 1)
        records.push({ question: 'Closes the socket and frees its buffers.', identifiers: ['closeSocket', 'fd'] });
    for (let index = 0; index < 40; index += 1)
      records.push({
        question: `Computes the checksum number ${index} of a block.`,
        identifiers: [`checksum${index}`, `blockValue${index % 7}`],
      });
    packages.set(name, records);
  }
  return packages;
}

describe('learnVocabulary', () => {
  const vocabulary = learnVocabulary(corpus(), { minCount: 8, minPackages: 4, minNpmi: 0.3, maxPartShare: 0.2 });

  it('keeps a pair seen often, in enough packages, far above chance', () => {
    expect(vocabulary.callback?.map((entry) => entry.part)).toContain('cb');
  });

  it('drops a pair seen in too few packages, and never pairs a word with its own forms', () => {
    expect(vocabulary.socket).toBeUndefined();
    expect(vocabulary.finish?.map((entry) => entry.part)).not.toContain('finish');
    for (const [word, parts] of Object.entries(vocabulary))
      for (const { part } of parts) expect(part.startsWith(word) || word.startsWith(part)).toBe(false);
  });

  it('gives the same table for the same comments, whatever order the packages come in', () => {
    const reversed = new Map([...corpus()].reverse());
    expect(learnVocabulary(reversed, { minCount: 8, minPackages: 4, minNpmi: 0.3, maxPartShare: 0.2 })).toEqual(vocabulary);
  });
});

describe('the query vocabulary', () => {
  afterEach(() => useQueryVocabulary(DEFAULT_VOCABULARY));

  it('adds the learned parts of a word to its query group, weighted by their strength, only when switched on', () => {
    const learned = [...learnedPartsOf('callback')];
    expect(learned).toEqual([]);
    useQueryVocabulary('learned');
    const parts = learnedPartsOf('callback');
    expect(parts.length).toBeGreaterThan(0);
    const forms = queryGroups('callback')[0].forms;
    for (const { part, npmi } of parts)
      // At least its learned weight: a part that is also the word's abbreviation (cb) keeps that weight, 0.8.
      expect(forms.some((form) => form.lexeme.startsWith(part.slice(0, 4)) && form.weight >= 0.5 * npmi)).toBe(true);
    expect(forms.some((form) => form.weight < 0.5 && form.weight > 0)).toBe(true);
    expect(synonymsOf('err')).toEqual([]);
  });

  it('uses the hand-written table alone by default', () => {
    expect(synonymsOf('err')).toContain('error');
    // The word (1), its abbreviation (query-understanding.ts, 0.8) and synonyms (0.5): nothing learned.
    expect(queryGroups('callback')[0].forms.every((form) => [1, 0.8, 0.5].includes(form.weight))).toBe(true);
  });
});
