import { createGroup } from '../../src/namespaces/namespaces.service';
import { addMember } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, projectIn, unique, userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';

const QUERY = 'query($fullPath: ID!) { project(fullPath: $fullPath) { id fullPath name defaultBranch duoFeaturesEnabled } }';

describe('project(fullPath)', () => {
  let service: TestService;
  let member: UserWithToken;
  let outsider: UserWithToken;
  let admin: UserWithToken;
  let group: string;

  beforeAll(async () => {
    service = await startTestService();
    member = await userWithToken(service.prisma);
    outsider = await userWithToken(service.prisma);
    admin = await userWithToken(service.prisma, { admin: true });
    group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
  });
  afterAll(() => service.close());

  const find = async (fullPath: string, token?: string) => {
    const { body } = await service.graphql<{ project: Record<string, unknown> | null }>(QUERY, { variables: { fullPath }, token });
    expect(body.errors).toBeUndefined();
    return body.data!.project;
  };

  it('shows a private project to a direct member, with GitLab ids', async () => {
    const project = await projectIn(service.prisma, group, { member: { username: member.username, accessLevel: 'guest' } });
    expect(await find(project.fullPath, member.token)).toEqual({
      id: `gid://gitlab/Project/${project.id}`,
      fullPath: project.fullPath,
      name: project.name,
      defaultBranch: 'main',
      duoFeaturesEnabled: true,
    });
  });

  it('hides a private project from non-members and anonymous users exactly like a missing one', async () => {
    const project = await projectIn(service.prisma, group);
    expect(await find(project.fullPath, outsider.token)).toBeNull();
    expect(await find(project.fullPath)).toBeNull();
    expect(await find(`${group}/does-not-exist`, outsider.token)).toBeNull();
  });

  it('shows a private project to members of an ancestor group', async () => {
    const parent = await createGroup(service.prisma, { path: unique('parent'), plan: 'premium' });
    const child = await createGroup(service.prisma, { path: 'team', parentPath: parent.fullPath });
    const project = await projectIn(service.prisma, child.fullPath);
    const inheritor = await userWithToken(service.prisma);
    expect(await find(project.fullPath, inheritor.token)).toBeNull();
    await addMember(service.prisma, { fullPath: parent.fullPath, username: inheritor.username, accessLevel: 'reporter' });
    expect(await find(project.fullPath, inheritor.token)).toMatchObject({ fullPath: project.fullPath });
  });

  it('shows any project to an admin', async () => {
    const project = await projectIn(service.prisma, group);
    expect(await find(project.fullPath, admin.token)).toMatchObject({ fullPath: project.fullPath });
  });

  it('shows internal projects to signed-in users only, public ones to everyone', async () => {
    const internal = await projectIn(service.prisma, group, { visibility: 'internal' });
    const open = await projectIn(service.prisma, group, { visibility: 'public' });
    expect(await find(internal.fullPath, outsider.token)).toMatchObject({ fullPath: internal.fullPath });
    expect(await find(internal.fullPath)).toBeNull();
    expect(await find(open.fullPath)).toMatchObject({ fullPath: open.fullPath });
  });
});
