import { readFileSync } from 'node:fs';
import { printGraphQLSchema } from '../../src/resolvers/schema';
import { SCHEMA_FILE } from '../../src/paths';

describe('schema.graphql', () => {
  it('is what the code emits (run `npm run schema:emit` after changing a resolver or type)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printGraphQLSchema());
  });

  it("uses GitLab's names and scalars", () => {
    const schema = printGraphQLSchema();
    for (const name of [
      'scalar UserID',
      'scalar ProjectID',
      'scalar NamespaceID',
      'scalar AiModelID',
      'scalar Time',
      'scalar JSON',
      'type CurrentUser',
      'duoChatAvailableFeatures: [String!]!',
    ]) {
      expect(schema).toContain(name);
    }
  });
});
