import pg from 'pg';
import { digestToken } from '../../src/auth/tokens';
import { revokeToken, setUserState } from '../../src/users/users.service';
import { groupWithSeat, userWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';

const CURRENT_USER = '{ currentUser { username duoChatAvailable } }';

/** Another process writing to the same database (an admin command): the service's cache cannot know. */
async function elsewhere(url: string, sql: string, params: unknown[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

async function statusWithin(service: TestService, token: string, expected: number, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { status } = await service.graphql(CURRENT_USER, { token });
    if (status === expected || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the short-lived cache of token, seat and membership look-ups', () => {
  describe('with a long time to live', () => {
    let service: TestService;
    let databaseUrl: string;
    beforeAll(async () => {
      service = await startTestService({ env: { AUTH_CACHE_MS: '60000' } });
      databaseUrl = service.running.services.config.databaseUrl!;
    });
    afterAll(() => service.close());

    it('reuses a token and its user it looked up, until the service itself revokes the token', async () => {
      const user = await userWithToken(service.prisma);
      expect((await service.graphql(CURRENT_USER, { token: user.token })).status).toBe(200);
      // Revoked behind the service's back: the cached look-up still answers (this is what saves the round trip).
      await elsewhere(databaseUrl, 'UPDATE personal_access_tokens SET revoked_at = now() WHERE token_digest = $1', [
        digestToken(user.token),
      ]);
      expect((await service.graphql(CURRENT_USER, { token: user.token })).status).toBe(200);
      // Through the service: forgotten at once.
      await revokeToken(service.prisma, { token: user.token });
      const { status, body } = await service.graphql(CURRENT_USER, { token: user.token });
      expect(status).toBe(401);
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    });

    it('forgets a blocked user at once when the block goes through the service', async () => {
      const user = await userWithToken(service.prisma);
      expect((await service.graphql(CURRENT_USER, { token: user.token })).status).toBe(200);
      await setUserState(service.prisma, user.username, 'blocked');
      expect((await service.graphql(CURRENT_USER, { token: user.token })).status).toBe(401);
    });

    it('reuses Duo seats it looked up, and sees a seat assigned through the service at once', async () => {
      const user = await userWithToken(service.prisma);
      const before = await service.graphql<{ currentUser: { duoChatAvailable: boolean } }>(CURRENT_USER, { token: user.token });
      expect(before.body.data?.currentUser.duoChatAvailable).toBe(false);
      await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
      const after = await service.graphql<{ currentUser: { duoChatAvailable: boolean } }>(CURRENT_USER, { token: user.token });
      expect(after.body.data?.currentUser.duoChatAvailable).toBe(true);
      await elsewhere(databaseUrl, 'DELETE FROM seat_assignments WHERE user_id = $1', [user.id]);
      const cached = await service.graphql<{ currentUser: { duoChatAvailable: boolean } }>(CURRENT_USER, { token: user.token });
      expect(cached.body.data?.currentUser.duoChatAvailable).toBe(true);
    });
  });

  describe('with a short time to live', () => {
    let service: TestService;
    let databaseUrl: string;
    beforeAll(async () => {
      service = await startTestService({ env: { AUTH_CACHE_MS: '1000' } });
      databaseUrl = service.running.services.config.databaseUrl!;
    });
    afterAll(() => service.close());

    it('lets a token revoked by another process go within seconds', async () => {
      const user = await userWithToken(service.prisma);
      expect((await service.graphql(CURRENT_USER, { token: user.token })).status).toBe(200);
      await elsewhere(databaseUrl, 'UPDATE personal_access_tokens SET revoked_at = now() WHERE token_digest = $1', [
        digestToken(user.token),
      ]);
      expect(await statusWithin(service, user.token, 401, 10_000)).toBe(401);
    });

    it('lets a seat removed by another process go within seconds', async () => {
      const user = await userWithToken(service.prisma);
      await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_pro', username: user.username });
      const query = () => service.graphql<{ currentUser: { duoChatAvailable: boolean } }>(CURRENT_USER, { token: user.token });
      expect((await query()).body.data?.currentUser.duoChatAvailable).toBe(true);
      await elsewhere(databaseUrl, 'DELETE FROM seat_assignments WHERE user_id = $1', [user.id]);
      const deadline = Date.now() + 10_000;
      let available = true;
      while (available && Date.now() < deadline) {
        available = (await query()).body.data?.currentUser.duoChatAvailable ?? true;
        if (available) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(available).toBe(false);
    });
  });
});
