import { buildSchema, parse, validate } from 'graphql';
import { depthLimitRule } from '../../src/graphql/depth-limit';

const schema = buildSchema(`type Query { node: Node } type Node { id: ID child: Node }`);
const check = (query: string, maxDepth: number) => validate(schema, parse(query), [depthLimitRule(maxDepth)]).map((error) => error.message);

describe('depthLimitRule', () => {
  it('counts the fields inside fragments and refuses past the limit', () => {
    const query = `query { node { ...A } } fragment A on Node { child { ...B } } fragment B on Node { child { id } }`;
    expect(check(query, 4)).toEqual([]);
    expect(check(query, 3)).toEqual(['Query has depth of 4, which exceeds max depth of 3']);
  });

  it('walks each fragment once: 40 fragments each spreading the next twice are answered, not walked 2^40 times', () => {
    // Anonymous callers can send this (1.5 KB for 22 fragments took 2.2 s when every spread was walked).
    const fragments = Array.from({ length: 40 }, (_, index) => `fragment F${index} on Query { ...F${index + 1} ...F${index + 1} }`);
    const query = `query { ...F0 } ${fragments.join(' ')} fragment F40 on Query { node { child { id } } }`;
    expect(check(query, 3)).toEqual([]);
    expect(check(query, 2)).toEqual(['Query has depth of 3, which exceeds max depth of 2']);
  });
});
