import { assignSeat, buyAddOn, createGroup } from '../../src/namespaces/namespaces.service';
import { groupWithSeat, unique, userWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';

const QUERY = 'query { currentUser { duoChatAvailable duoCodeSuggestionsAvailable duoChatAvailableFeatures } }';

const PRO_FEATURES = [
  'include_file_context',
  'include_snippet_context',
  'include_dependency_context',
  'include_local_git_context',
  'include_terminal_context',
  'include_repository_context',
  'include_directory_context',
];
const ENTERPRISE_FEATURES = [
  'include_file_context',
  'include_snippet_context',
  'include_merge_request_context',
  'include_issue_context',
  'include_dependency_context',
  'include_local_git_context',
  'include_terminal_context',
  'include_repository_context',
  'include_directory_context',
];

type DuoFields = { currentUser: { duoChatAvailable: boolean; duoCodeSuggestionsAvailable: boolean; duoChatAvailableFeatures: string[] } };

describe('currentUser Duo availability and duoChatAvailableFeatures', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());

  const ask = async (token: string) => {
    const { body } = await service.graphql<DuoFields>(QUERY, { token });
    expect(body.errors).toBeUndefined();
    return body.data!.currentUser;
  };

  it('is off with no seat', async () => {
    const user = await userWithToken(service.prisma);
    expect(await ask(user.token)).toEqual({ duoChatAvailable: false, duoCodeSuggestionsAvailable: false, duoChatAvailableFeatures: [] });
  });

  it.each([
    ['duo_pro', 'premium', PRO_FEATURES],
    ['duo_pro', 'ultimate', PRO_FEATURES],
    ['duo_enterprise', 'ultimate', ENTERPRISE_FEATURES],
  ])('a %s seat on a %s group gives chat, suggestions and its categories', async (addOn, plan, features) => {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan, addOn, username: user.username });
    expect(await ask(user.token)).toEqual({
      duoChatAvailable: true,
      duoCodeSuggestionsAvailable: true,
      duoChatAvailableFeatures: features,
    });
  });

  it('a seat on a free group gives nothing', async () => {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'free', addOn: 'duo_enterprise', username: user.username });
    expect(await ask(user.token)).toEqual({ duoChatAvailable: false, duoCodeSuggestionsAvailable: false, duoChatAvailableFeatures: [] });
  });

  it('an expired purchase gives nothing', async () => {
    const user = await userWithToken(service.prisma);
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
    await service.prisma.addOnPurchase.updateMany({
      where: { group: { fullPath: group } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await ask(user.token)).duoChatAvailable).toBe(false);
  });

  it('holding both add-ons gives the union', async () => {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: user.username });
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    expect((await ask(user.token)).duoChatAvailableFeatures).toEqual(ENTERPRISE_FEATURES);
  });

  it('refuses add-ons on subgroups', async () => {
    const parent = await createGroup(service.prisma, { path: unique('parent'), plan: 'ultimate' });
    const child = await createGroup(service.prisma, { path: 'child', parentPath: parent.fullPath });
    await expect(buyAddOn(service.prisma, { groupPath: child.fullPath, addOn: 'duo_pro', seats: 1 })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
  });

  it('refuses a seat beyond the purchased count', async () => {
    const group = await groupWithSeat(service.prisma, { plan: 'ultimate' });
    await buyAddOn(service.prisma, { groupPath: group, addOn: 'duo_pro', seats: 1 });
    const first = await userWithToken(service.prisma);
    const second = await userWithToken(service.prisma);
    await assignSeat(service.prisma, { groupPath: group, addOn: 'duo_pro', username: first.username });
    await expect(assignSeat(service.prisma, { groupPath: group, addOn: 'duo_pro', username: second.username })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });
});

describe('DUO_DISABLED_CONTEXT_CATEGORIES', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { DUO_DISABLED_CONTEXT_CATEGORIES: 'repository, ISSUE' } });
  });
  afterAll(() => service.close());

  it('removes the disabled categories from every user', async () => {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    const { body } = await service.graphql<DuoFields>(QUERY, { token: user.token });
    expect(body.data!.currentUser.duoChatAvailableFeatures).toEqual(
      ENTERPRISE_FEATURES.filter((feature) => feature !== 'include_repository_context' && feature !== 'include_issue_context'),
    );
    expect(body.data!.currentUser.duoChatAvailable).toBe(true);
  });
});
