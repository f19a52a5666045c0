import { isAppError } from '../../src/errors';
import { paginate } from '../../src/resolvers/connection';

const items = ['a', 'b', 'c'].map((id) => ({ id }));
const page = (after: string) => paginate(items, (item) => item.id, { first: 10, after });

describe('paginate', () => {
  it('takes a cursor it gave, with or without base64 padding, and answers what follows', () => {
    const cursor = paginate(items, (item) => item.id, { first: 1 }).edges[0].cursor;
    expect(page(cursor).nodes.map((item) => item.id)).toEqual(['b', 'c']);
    expect(page(`${cursor}==`).nodes.map((item) => item.id)).toEqual(['b', 'c']);
  });

  it("refuses a forged cursor as bad input naming the field, however many '=' runs it holds", () => {
    // 200,000 characters of '=' not at the end: the check once rescanned each run, quadratic in the cursor.
    for (const forged of ['%%%', `AAAA${'='.repeat(200_000)}x`]) {
      let refused: unknown;
      try {
        page(forged);
      } catch (error) {
        refused = error;
      }
      expect(isAppError(refused) && refused.code === 'BAD_USER_INPUT' && refused.field === 'after').toBe(true);
    }
  });
});
