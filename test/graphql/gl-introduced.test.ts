import { buildSchema, execute, parse, validate, type DocumentNode } from 'graphql';
import { parseVersion, stripIntroducedFields } from '../../src/graphql/gl-introduced';

// GitLab's @gl_introduced on its own: what is stripped for which version, that the rest validates
// as GitLab's suppressions promise, and the nulls put into the answer. Over HTTP, graphql-ws and
// ActionCable: gl-introduced.e2e.test.ts.

const schema = buildSchema(`
  directive @gl_introduced(version: String!) on FIELD | INLINE_FRAGMENT
  type Query { me: User, users(names: [String!]): [User!]! }
  type User { name: String, friends: [User!]! }
`);
const VERSION = '17.11.0';
const strip = (query: string, version = VERSION) => stripIntroducedFields(query, { version });
const errorsOf = (document: DocumentNode) => validate(schema, document).map((error) => error.message);

const ROOT = {
  me: { name: 'alice', friends: [{ name: 'bob', friends: [] }] },
  users: [
    { name: 'alice', friends: [{ name: 'bob', friends: [] }] },
    { name: 'bob', friends: [] },
  ],
};

/** Strips, validates and runs a document as a transport does, and answers as the client sees it. */
async function answer(query: string, operationName?: string) {
  const stripped = strip(query);
  const document = parse(stripped?.query ?? query);
  const errors = errorsOf(document);
  if (errors.length > 0) return { errors };
  const result = await execute({ schema, document, rootValue: ROOT, operationName });
  stripped?.restore(result.data, { schema, operationName });
  return { data: result.data, errors: result.errors?.map((error) => error.message) };
}

describe('@gl_introduced', () => {
  it.each([
    ['18.10.0', true],
    ['17.11.1', true],
    ['17.12.0', true],
    ['v18.0.0-pre', true],
    ['17.11.0', false],
    ['17.0.0', false],
    ['16.11.99', false],
    ['banana', false],
    ['18.10', false],
    ['0.0.0', false],
    [`${'1'.repeat(130)}.0.0`, false],
  ])('version "%s" is stripped: %s (numeric major.minor.patch against 17.11.0; malformed ones strip nothing)', (version, stripped) => {
    const query = `query q { me { name future: name @gl_introduced(version: "${version}") } }`;
    expect(strip(query) !== null).toBe(stripped);
  });

  it('reads versions as GitLab does: the first major.minor.patch in the text', () => {
    expect(parseVersion('18.10.0')).toEqual([18, 10, 0]);
    expect(parseVersion('v18.1.2-ee')).toEqual([18, 1, 2]);
    expect(parseVersion('18.1')).toBeNull();
  });

  it('strips nothing for a tag that is not a string literal, and validation then refuses it', () => {
    for (const value of ['123', '$version']) {
      const query = `query q($version: String!) { me { name @gl_introduced(version: ${value}) } }`;
      expect(strip(query)).toBeNull();
    }
    expect(errorsOf(parse('{ me { name @gl_introduced(version: 123) } }'))).toEqual(['String cannot represent a non string value: 123']);
  });

  it('keeps every line and column of the client text, so errors point where the client wrote them', () => {
    const query = '{\n  me {\n    future @gl_introduced(version: "18.0.0") {\n      name\n    }\n    unknown\n  }\n}';
    const stripped = strip(query)!;
    expect(stripped.query).toHaveLength(query.length);
    expect(stripped.query.split('\n').map((line) => line.length)).toEqual(query.split('\n').map((line) => line.length));
    expect(validate(schema, parse(stripped.query))[0].locations).toEqual([{ line: 6, column: 5 }]);
  });

  it('leaves no unused variable or fragment behind, through fragments the stripped node spreads', async () => {
    const query = `query q($id: ID!, $term: String, $names: [String!]) {
      users(names: $names) { name future(id: $id) @gl_introduced(version: "18.0.0") { __typename child { ...shared } } }
    }
    fragment shared on Item { title(term: $term) ...nested }
    fragment nested on Item { description }`;
    expect(await answer(query)).toEqual({
      data: {
        users: [
          { name: 'alice', future: null },
          { name: 'bob', future: null },
        ],
      },
    });
  });

  it('still reports a variable or fragment nothing uses, and one the rest of the document uses wrongly', async () => {
    const query = `query q($unused: String, $id: ID) { me { name future(id: $id) @gl_introduced(version: "18.0.0") } }
      fragment lonely on User { name }`;
    expect((await answer(query)).errors).toEqual([
      'Variable "$unused" is never used in operation "q".',
      'Fragment "lonely" is never used.',
    ]);
    expect((await answer('{ me { name future @gl_introduced(version: "18.0.0") unknown } }')).errors).toEqual([
      'Cannot query field "unknown" on type "User".',
    ]);
  });

  it('answers a parent whose selections were all stripped with null in each, the operation itself too', async () => {
    expect(await answer('query q { me { future @gl_introduced(version: "18.0.0") { x } } }')).toEqual({ data: { me: { future: null } } });
    expect(await answer('{ gone @gl_introduced(version: "99.0.0") }')).toEqual({ data: { gone: null } });
    expect(await answer('{ me { ... on User @gl_introduced(version: "18.0.0") { soon later: name } } }')).toEqual({
      data: { me: { soon: null, later: null } },
    });
  });

  it('puts null in every object of a list, through fragments, without touching a key another field answers', async () => {
    const query = `query q { users { ...friendly } me { name name @gl_introduced(version: "18.0.0") } }
      fragment friendly on User { friends { name future @gl_introduced(version: "18.0.0") } nick: name @gl_introduced(version: "18.0.0") }`;
    expect(await answer(query)).toEqual({
      data: {
        users: [
          { friends: [{ name: 'bob', future: null }], nick: null },
          { friends: [], nick: null },
        ],
        me: { name: 'alice' },
      },
    });
  });

  it('restores the operation that ran, in a document of several', async () => {
    const query = `query a { me { name } } query b { me { future @gl_introduced(version: "18.0.0") name } }`;
    expect(await answer(query, 'a')).toEqual({ data: { me: { name: 'alice' } } });
    expect(await answer(query, 'b')).toEqual({ data: { me: { name: 'alice', future: null } } });
  });

  it('counts the stripped fields toward depth and cost, each fragment once', () => {
    const fragments = Array.from(
      { length: 30 },
      (_, index) => `fragment F${index} on User { friends { ...F${index + 1} ...F${index + 1} } }`,
    );
    const query = `query deep { me { name future @gl_introduced(version: "18.0.0") { ...F0 } } } ${fragments.join(' ')}
      fragment F30 on User { name }`;
    const stripped = strip(query)!;
    expect(stripped.limitsOf('deep')).toEqual({ depth: 33, cost: 2 ** 31 });
    expect(stripped.limitsOf('other')).toBeUndefined();
  });
});
