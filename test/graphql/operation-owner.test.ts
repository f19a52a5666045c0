import 'reflect-metadata';
import { parse, print } from 'graphql';
import { operationOwner, subOperation, TooManyRootFieldsError, variablesFor } from '../../src/graphql/operation-owner';
import { buildGraphQLSchema } from '../../src/resolvers/schema';

const schema = buildGraphQLSchema();
const GITLAB_ANSWERS = new Set(['metadata']);
const ownerOf = (query: string, operationName?: string) => {
  const decision = operationOwner({ schema, document: parse(query), operationName, gitlabFields: GITLAB_ANSWERS });
  return decision.owner === 'mixed'
    ? { owner: 'mixed', fields: decision.fields.map((field) => `${field.responseKey}:${field.owner}`) }
    : { owner: decision.owner };
};

describe('who answers an operation in connected mode', () => {
  // Documents as the clients send them: the language server (gitlab-lsp) and VS Code's GitLab Workflow.
  it.each([
    ['LSP getUser', 'query getUser { currentUser { id username name } }', 'ours'],
    [
      'LSP getUser with a field tagged for a later GitLab',
      `query getUser { currentUser { id username name avatarUrl webUrl
        userPreferences @gl_introduced(version: "18.10.0") { duoDefaultNamespace { id fullName fullPath } } } }`,
      'ours',
    ],
    [
      'a field tagged for our version or before is checked as any other',
      'query { currentUser { id mergeRequests @gl_introduced(version: "16.0.0") { count } } }',
      'gitlab',
    ],
    ['LSP duo features', 'query getDuoChatAvailableFeatures { currentUser { duoChatAvailableFeatures } }', 'ours'],
    ['LSP duoFeaturesEnabled', 'query GetProject($projectPath: ID!) { project(fullPath: $projectPath) { duoFeaturesEnabled } }', 'ours'],
    ['LSP project id', 'query getProject($projectPath: ID!) { project(fullPath: $projectPath) { id } }', 'ours'],
    [
      'LSP chat mutation',
      `mutation chat($question: String!, $resourceId: AiModelID, $currentFileContext: AiCurrentFileInput, $clientSubscriptionId: String,
        $platformOrigin: String!) {
        aiAction(input: { chat: { resourceId: $resourceId, content: $question, currentFile: $currentFileContext },
          clientSubscriptionId: $clientSubscriptionId, platformOrigin: $platformOrigin }) { requestId errors }
      }`,
      'ours',
    ],
    [
      'VS Code GetProject (httpUrlToRepo is not ours)',
      `fragment projectDetails on Project { id name description httpUrlToRepo sshUrlToRepo fullPath webUrl group { id } }
       query GetProject($projectPath: ID!) { project(fullPath: $projectPath) { ...projectDetails } }`,
      'gitlab',
    ],
    [
      'VS Code GetMrDiscussions (a field of ours, a sub-selection of GitLab)',
      `query GetMrDiscussions($projectPath: ID!, $iid: String!, $afterCursor: String) {
        project(fullPath: $projectPath) { id mergeRequest(iid: $iid) { discussions(after: $afterCursor) { nodes { replyId } } } }
      }`,
      'gitlab',
    ],
    [
      'VS Code CreateNote',
      `mutation CreateNote($issuableId: NoteableID!, $body: String!, $replyId: DiscussionID) {
        createNote(input: { noteableId: $issuableId, body: $body, discussionId: $replyId }) { errors }
      }`,
      'gitlab',
    ],
    [
      'GitLab-typed variable on a field of GitLab',
      'query($state: MergeRequestState) { currentUser { assignedMergeRequests(state: $state) { count } } }',
      'gitlab',
    ],
    ["metadata is GitLab's version", 'query { metadata { version } }', 'gitlab'],
    [
      'a document that names no single operation is left to Apollo',
      'query a { currentUser { id } } query b { mergeRequest(id: "x") { id } }',
      'ours',
    ],
    ['subscriptions stay ours', 'subscription { aiCompletionResponse { content } }', 'ours'],
  ])('%s', (_name, query, owner) => {
    expect(ownerOf(query)).toEqual({ owner });
  });

  it('names each top-level field of a mixed operation, __typename with either side, through fragments and aliases', () => {
    const query = `
      fragment mine on Query { me: currentUser { username } }
      query mixed($path: ID!) { ...mine ... on Query { project(fullPath: $path) { mergeRequests { count } } } __typename }`;
    expect(ownerOf(query)).toEqual({ owner: 'mixed', fields: ['me:ours', 'project:gitlab', '__typename:either'] });
  });

  it('gives GitLab both selections under one response key when only GitLab can answer one of them', () => {
    const query = `query($p: ID!) { project(fullPath: $p) { name } project(fullPath: $p) { mergeRequests { count } } }`;
    expect(ownerOf(query)).toEqual({ owner: 'gitlab' });
  });

  it('splits a mixed operation into documents each side accepts: only the variables and fragments each part uses', () => {
    const document = parse(`
      fragment mr on MergeRequest { title }
      query mixed($path: ID!, $iid: String!, $question: String) {
        currentUser { username }
        project(fullPath: $path) { mergeRequest(iid: $iid) { ...mr } }
      }`);
    const decision = operationOwner({ schema, document });
    if (decision.owner !== 'mixed') throw new Error('expected mixed');
    const theirs = subOperation(
      document,
      decision.operation,
      decision.fields.filter((field) => field.owner === 'gitlab').map((field) => field.node),
    );
    expect(print(theirs)).toBe(
      'query mixed($path: ID!, $iid: String!) {\n  project(fullPath: $path) {\n    mergeRequest(iid: $iid) {\n      ...mr\n' +
        '    }\n  }\n}\n\nfragment mr on MergeRequest {\n  title\n}',
    );
    expect(variablesFor(theirs, { path: 'a/b', iid: '1', question: 'x' })).toEqual({ path: 'a/b', iid: '1' });
  });

  it('refuses to split an operation with more top-level fields than the limit', () => {
    const fields = Array.from({ length: 101 }, (_, index) => `f${index}: project(fullPath: "a/b") { mergeRequests { count } }`).join('\n');
    expect(() => operationOwner({ schema, document: parse(`{ ${fields} }`) })).toThrow(TooManyRootFieldsError);
  });
});
