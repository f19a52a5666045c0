import type { Group, Project } from '../../src/db/prisma';
import { groupWithSeat, projectIn, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { DEFAULT_FEATURE_FLAGS } from '../../src/config';
import { ACCESS, startGitLabStandIn, type GitLabStandIn } from '../helpers/gitlab-stand-in';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { loadFixtures, type Fixture } from './fixture-format';

/**
 * What the conformance runners talk to: the service with every role in one process, the stub model
 * echoing, no gatekeeper (clients' documents, not prompts, are under test), and alice with a Duo seat
 * in a group with a project she develops in. Connected to GitLab (`gitlab: true`), all of that is on
 * the GitLab stand-in instead, alice's Duo comes from DUO_ACCESS, and the group and project rows are
 * the service's mirrors of GitLab's, made by alice's first reference to the project.
 */
export type ConformanceService = {
  stub: StubLlmServer;
  /** The GitLab stand-in, when connected. */
  gitlab: GitLabStandIn | null;
  service: TestService;
  alice: UserWithToken;
  group: Group;
  project: Project;
  close(): Promise<void>;
};

export async function startConformanceService(
  addOn: 'duo_pro' | 'duo_enterprise' = 'duo_enterprise',
  /** More settings of the service's, on top of the runners' own. */
  env: Record<string, string> = {},
  options: { gitlab?: boolean } = {},
): Promise<ConformanceService> {
  const stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
  const gitlab = options.gitlab ? await startGitLabStandIn() : null;
  const standIn = gitlab ? connectedWorld(gitlab, addOn) : null;
  const service = await startTestService({
    role: 'all',
    env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', GATEKEEPER: 'false', ...standIn?.env, ...env },
  }).catch(async (error: unknown) => {
    await stub.close();
    await gitlab?.close();
    throw error;
  });
  let alice: UserWithToken;
  let group: Group;
  let project: Project;
  if (standIn) {
    alice = standIn.alice;
    // Alice's first reference makes the project (and its namespace) known to the service.
    const { body } = await service.graphql('query($fullPath: ID!) { project(fullPath: $fullPath) { id } }', {
      token: alice.token,
      variables: { fullPath: standIn.projectPath },
    });
    if (!body.data?.project) throw new Error(`the stand-in's project is not known to the service: ${JSON.stringify(body)}`);
    project = await service.prisma.project.findUniqueOrThrow({ where: { gitlabProjectId: standIn.projectId } });
    group = await service.prisma.group.findUniqueOrThrow({ where: { gitlabNamespaceId: standIn.groupId } });
  } else {
    alice = await userWithToken(service.prisma);
    const groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn, username: alice.username });
    project = await projectIn(service.prisma, groupPath, { member: { username: alice.username, accessLevel: 'developer' } });
    group = await service.prisma.group.findUniqueOrThrow({ where: { fullPath: groupPath } });
  }
  return {
    stub,
    gitlab,
    service,
    alice,
    group,
    project,
    close: async () => {
      await service.close();
      await stub.close();
      await gitlab?.close();
    },
  };
}

/** Alice, her group and the project she develops in, on the GitLab stand-in; Duo for her alone, with the add-on's features. */
function connectedWorld(gitlab: GitLabStandIn, addOn: 'duo_pro' | 'duo_enterprise') {
  const user = gitlab.addUser({ username: unique('alice') });
  const group = gitlab.addGroup({ path: unique('group') });
  const project = gitlab.addProject({ namespace: group, path: unique('project'), visibility: 'private' });
  gitlab.setProjectMember(project, user.id, ACCESS.developer);
  // Instance feature flags are GitLab's in connected mode (metadata is passed on): this GitLab has on what
  // duo-slice turns on by default standalone, so both modes answer the clients alike.
  for (const flag of DEFAULT_FEATURE_FLAGS) gitlab.setFeatureFlag(flag, true);
  return {
    alice: { id: user.id, username: user.username, token: gitlab.addToken(user.id, { scopes: ['api'] }) },
    projectId: project.id,
    groupId: group.id,
    projectPath: gitlab.projectFullPath(project),
    env: { GITLAB_URL: gitlab.url, DUO_ACCESS: `users:${user.username}`, DUO_ADD_ON: addOn },
  };
}

/** One client's GraphQL fixtures by name. */
export function graphqlFixturesOf(client: Fixture['client']): Record<string, Fixture> {
  return Object.fromEntries(
    loadFixtures('graphql')
      .filter((fixture) => fixture.client === client)
      .map((fixture) => [fixture.name, fixture]),
  );
}
