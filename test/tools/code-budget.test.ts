import { withinBudget } from '../../src/tools/semantic-search.tool';

describe('withinBudget', () => {
  const snippet = (name: string, chars: number) => ({ name, content: 'x'.repeat(chars) });

  it('keeps the snippets that fit, in their order, skipping one too big for what is left', () => {
    const kept = withinBudget([snippet('best', 50), snippet('big', 80), snippet('small', 30), snippet('last', 30)], 100);
    expect(kept.map((item) => item.name)).toEqual(['best', 'small']);
  });

  it('always gives the best snippet, even when it alone is over the budget', () => {
    expect(withinBudget([snippet('huge', 500), snippet('small', 10)], 100).map((item) => item.name)).toEqual(['huge']);
  });
});
