import { userWithToken, type UserWithToken } from '../helpers/fixtures';
import { startTestService, type TestService } from '../helpers/test-service';
import { overCable, overGraphqlWs, overHttp, type Operation, type TransportResult } from './transports';

/** `{ ...F0 }` where each fragment spreads the next twice: 2^levels fields from a few hundred characters. */
function fanOut(levels: number): string {
  const fragments = Array.from({ length: levels }, (_unused, level) => `fragment F${level} on Query { ...F${level + 1} ...F${level + 1} }`);
  return `query { ...F0 } ${fragments.join(' ')} fragment F${levels} on Query { currentUser { id } }`;
}

// Every query limit answers a coded client error with no data, on every transport: a fragment
// fan-out was refused as INTERNAL_SERVER_ERROR (a 500 and an error log line anyone could cause).
const LIMITS: Array<[string, Operation, RegExp]> = [
  ['a fragment fan-out (2^16 fields)', { query: fanOut(16) }, /more than 10000 fields and fragments.*max complexity of 250/],
  ['a fan-out just past the node limit (2^14)', { query: fanOut(14) }, /more than 10000 fields and fragments/],
  [
    'a costly query',
    { query: `{ ${Array.from({ length: 130 }, (_unused, index) => `a${index}: currentUser { id }`).join(' ')} }` },
    /exceeds max complexity of 250/,
  ],
  [
    'a deep query',
    { query: `{ __schema { types { fields { type ${'{ ofType '.repeat(20)}{ name }${' }'.repeat(20)} } } } }` },
    /exceeds max depth/,
  ],
  ['a long document', { query: `{ ${Array.from({ length: 6000 }, () => '__typename').join(' ')} }` }, /token/i],
];

describe('query limits on every transport', () => {
  let service: TestService;
  let user: UserWithToken;

  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '1000' } });
    user = await userWithToken(service.prisma);
  });
  afterAll(() => service.close());

  const transports: Array<[string, (operation: Operation) => Promise<TransportResult>]> = [
    ['POST /api/graphql', (operation) => overHttp(service.url, operation)],
    ['graphql-ws', (operation) => overGraphqlWs(service.url, operation)],
    ['ActionCable', (operation) => overCable(service.url, operation)],
  ];
  const cases = transports.flatMap(([transport, send]) =>
    LIMITS.map(([limit, operation, message]) => [transport, limit, send, operation, message] as const),
  );

  it.each(cases)('%s: %s is a coded client error with no data', async (transport, _limit, send, operation, message) => {
    // ActionCable takes signed-in users only.
    for (const token of transport === 'ActionCable' ? [user.token] : [null, user.token]) {
      const started = Date.now();
      const result = await send({ ...operation, token });
      expect(Date.now() - started).toBeLessThan(2_000);
      if (result.status !== undefined) expect(result.status).toBeLessThan(500);
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.message).toMatch(message);
      expect(result.errors?.[0]?.extensions?.code).toMatch(/^(BAD_USER_INPUT|GRAPHQL_VALIDATION_FAILED|GRAPHQL_PARSE_FAILED)$/);
    }
  });
});
