import type { Group, Project } from '../../src/db/prisma';
import { groupWithSeat, projectIn, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startStubLlmServer, type StubLlmServer } from '../helpers/stub-llm-server';
import { startTestService, type TestService } from '../helpers/test-service';
import { loadFixtures, type Fixture } from './fixture-format';

/**
 * What the conformance runners talk to: the service with every role in one process, the stub model
 * echoing, no gatekeeper (clients' documents, not prompts, are under test), and alice with a Duo seat
 * in a group with a project she develops in.
 */
export type ConformanceService = {
  stub: StubLlmServer;
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
): Promise<ConformanceService> {
  const stub = await startStubLlmServer({ defaultBehaviour: { kind: 'echo' } });
  const service = await startTestService({
    role: 'all',
    env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: stub.url, LLM_MODEL: 'stub', GATEKEEPER: 'false', ...env },
  }).catch(async (error: unknown) => {
    await stub.close();
    throw error;
  });
  const alice = await userWithToken(service.prisma);
  const groupPath = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn, username: alice.username });
  const project = await projectIn(service.prisma, groupPath, { member: { username: alice.username, accessLevel: 'developer' } });
  const group = await service.prisma.group.findUniqueOrThrow({ where: { fullPath: groupPath } });
  return {
    stub,
    service,
    alice,
    group,
    project,
    close: async () => {
      await service.close();
      await stub.close();
    },
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
