import { addMember, createGroup } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, projectIn, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
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

  it("finds a subgroup's project through membership of a group above it", async () => {
    const parent = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    const child = await createGroup(service.prisma, { path: unique('sub'), parentPath: parent });
    const deep = await projectIn(service.prisma, child.fullPath);
    const inherited = await userWithToken(service.prisma);
    await addMember(service.prisma, { fullPath: parent, username: inherited.username, accessLevel: 'guest' });
    expect(paths(await list({ membership: true }, inherited.token))).toEqual([deep.fullPath]);
    expect(paths(await list({}, inherited.token))).toContain(deep.fullPath);
    expect(paths(await list({}, outsider.token))).not.toContain(deep.fullPath);
  });

  it('is not crowded out by more projects the user may not see than the list looks at (1,000)', async () => {
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    const groupId = (await service.prisma.group.findUniqueOrThrow({ where: { fullPath: group } })).id;
    const word = unique('crowd');
    // 1,001 private projects the member does not belong to, all matching the search and sorted before theirs.
    await service.prisma.project.createMany({
      data: Array.from({ length: 1001 }, (_, index) => ({
        groupId,
        path: `${word}-a${String(index).padStart(4, '0')}`,
        fullPath: `${group}/${word}-a${String(index).padStart(4, '0')}`,
        name: `${word} ${index}`,
      })),
    });
    const theirs = (await projectIn(service.prisma, group, { member: { username: member.username, accessLevel: 'developer' } })).fullPath;
    await service.prisma.project.update({ where: { fullPath: theirs }, data: { name: `${word} theirs` } });
    expect(paths(await list({ search: word }, member.token))).toEqual([theirs]);
    expect(paths(await list({ search: word, membership: true }, member.token))).toEqual([theirs]);
  });

  it('pages like any GitLab connection and refuses a page too large', async () => {
    const body = await list({ first: 1 }, member.token);
    expect(body.data!.projects.nodes).toHaveLength(1);
    expect(body.data!.projects.pageInfo.hasNextPage).toBe(true);
    const tooLarge = await list({ first: 101 }, member.token);
    expect(tooLarge.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
