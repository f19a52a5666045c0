import { addMember, createProject } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken } from './fixtures';
import type { TestService } from './test-service';
import { waitUntil } from './wait';

const START = `query($path: ID!, $query: String!) { codebaseSearch(projectPath: $path, query: $query, first: 1) { path } }`;
const CODE_INDEX = `query($path: ID!) { project(fullPath: $path) { codeIndex { state } } }`;

export type IndexedProject = { token: string; username: string; projectPath: string; projectId: number };

/**
 * A Developer with a Duo Enterprise seat and a project of the repository, indexed by the service's
 * own worker: the first search starts the index run, as a user's does, and the project's index is
 * READY when this returns.
 */
export async function indexedProject(service: TestService, options: { repository: string; name: string }): Promise<IndexedProject> {
  const user = await userWithToken(service.prisma);
  const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
  const { project } = await createProject(service.prisma, { fullPath: `${group}/${unique(options.name)}`, repository: options.repository });
  await addMember(service.prisma, { fullPath: project.fullPath, username: user.username, accessLevel: 'developer' });
  await service.graphql(START, { token: user.token, variables: { path: project.fullPath, query: 'start indexing' } });
  await waitUntil(
    () =>
      service.graphql<{ project: { codeIndex: { state: string } | null } }>(CODE_INDEX, {
        token: user.token,
        variables: { path: project.fullPath },
      }),
    {
      until: (response) => response.body.data?.project?.codeIndex?.state === 'READY',
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the index',
    },
  );
  return { token: user.token, username: user.username, projectPath: project.fullPath, projectId: project.id };
}

/** The files a GraphQL codebase search answers (its first `first` hits), best first, each once; a GraphQL error fails the test. */
export async function searchedFiles(
  service: TestService,
  options: { token: string; projectPath: string; query: string; first: number },
): Promise<string[]> {
  const { body } = await service.graphql<{ codebaseSearch: Array<{ path: string }> }>(
    `query($path: ID!, $query: String!, $first: Int!) { codebaseSearch(projectPath: $path, query: $query, first: $first) { path } }`,
    { token: options.token, variables: { path: options.projectPath, query: options.query, first: options.first } },
  );
  expect(body.errors).toBeUndefined();
  return [...new Set(body.data!.codebaseSearch.map((hit) => hit.path))];
}
