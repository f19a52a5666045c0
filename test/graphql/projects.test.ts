import { groupWithSeat, projectIn, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';

const QUERY =
  'query($membership: Boolean, $search: String, $first: Int) { projects(membership: $membership, search: $search, first: $first) { nodes ' +
  '{ fullPath } pageInfo { hasNextPage } } }';

// GitLab's `projects` query, as the chat page's project picker uses it.
describe('projects(membership:, search:)', () => {
  let service: TestService;
  let member: UserWithToken;
  let outsider: UserWithToken;
  let mine: string;
  let hidden: string;
  let open: string;

  beforeAll(async () => {
    service = await startTestService();
    member = await userWithToken(service.prisma);
    outsider = await userWithToken(service.prisma);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    mine = (await projectIn(service.prisma, group, { member: { username: member.username, accessLevel: 'reporter' } })).fullPath;
    hidden = (await projectIn(service.prisma, group)).fullPath;
    open = (await projectIn(service.prisma, group, { visibility: 'public' })).fullPath;
  });
  afterAll(() => service.close());

  const list = async (variables: Record<string, unknown>, token?: string) => {
    const { body } = await service.graphql<{ projects: { nodes: Array<{ fullPath: string }>; pageInfo: { hasNextPage: boolean } } }>(
      QUERY,
      { variables, token },
    );
    return body;
  };
  const paths = (body: Awaited<ReturnType<typeof list>>) => body.data!.projects.nodes.map((node) => node.fullPath);

  it('lists what the user can read, never a private project of others', async () => {
    const body = await list({}, member.token);
    expect(paths(body)).toEqual(expect.arrayContaining([mine, open]));
    expect(paths(body)).not.toContain(hidden);
    expect(paths(await list({}, outsider.token))).not.toContain(mine);
    expect(paths(await list({}))).not.toContain(mine);
  });

  it('keeps to memberships with membership: true, and filters by search', async () => {
    expect(paths(await list({ membership: true }, member.token))).toEqual([mine]);
    expect(paths(await list({ membership: true }, outsider.token))).toEqual([]);
    expect(paths(await list({ search: mine.split('/')[1].toUpperCase() }, member.token))).toEqual([mine]);
  });

  it('pages like any GitLab connection and refuses a page too large', async () => {
    const body = await list({ first: 1 }, member.token);
    expect(body.data!.projects.nodes).toHaveLength(1);
    expect(body.data!.projects.pageInfo.hasNextPage).toBe(true);
    const tooLarge = await list({ first: 101 }, member.token);
    expect(tooLarge.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
