import { groupWithSeat, userWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';

describe('DATABASE_POOL_SIZE', () => {
  let service: TestService;
  afterAll(async () => service?.close());

  it('keeps at most that many connections to PostgreSQL, however many requests need one at once', async () => {
    service = await startTestService({ env: { DATABASE_POOL_SIZE: '2' } });
    const alice = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: alice.username });
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => service.graphql('{ aiMessages { nodes { content } } }', { token: alice.token })),
    );
    expect(answers.map((answer) => answer.body.errors)).toEqual(Array.from({ length: 16 }, () => undefined));
    // The service's own pool answers this too: every connection to its database is one of the pool's.
    const [{ connections }] = await service.prisma.$queryRaw<Array<{ connections: number }>>`
      SELECT count(*)::int AS connections FROM pg_stat_activity WHERE datname = current_database()`;
    expect(connections).toBeGreaterThanOrEqual(1);
    expect(connections).toBeLessThanOrEqual(2);
  });
});
