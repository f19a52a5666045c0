/**
 * What a hung Redis or a hung PostgreSQL costs requests (prints figures; never passes or fails on time).
 *
 *   node -r @swc-node/register bench/outage.ts [seconds=4] [runs=3]
 *
 * Runs the API (`--role=api`) in a process of its own on a redis-server of the bench's own and on PostgreSQL
 * through a proxy of the bench's own (DATABASE_REQUEST_TIMEOUT_MS=2000), and in each run, for `seconds` each,
 * from 16 concurrent clients (BENCH_OUTAGE_CLIENTS=<n>):
 *  1. Redis stopped (SIGSTOP: its connections stay open, its replies stop):
 *     - a trivial query (`{ currentUser { id } }`), which can do without Redis (its rate limit lets it through);
 *     - aiAction, which cannot (its answer must be queued): it should fail with SERVICE_UNAVAILABLE, not wait;
 *     then Redis goes on (SIGCONT), and how long until aiAction is accepted again (polled every 20 ms);
 *  2. the proxy to PostgreSQL frozen (no bytes either way, connections open): `aiMessages`, which needs the
 *     database, should fail with SERVICE_UNAVAILABLE; then the proxy passes bytes again, and how long until
 *     `aiMessages` is answered again.
 * The first requests of each load wait out a timeout (Redis' 2 s command timeout, the 2 s request timeout):
 * p50 is what the rest get. Each figure is the median over `runs` runs. Every request and wait has a time limit.
 */
import { groupWithSeat, userWithToken } from '../test/helpers/fixtures';
import { startFreezableProxy, type FreezableProxy } from '../test/helpers/freezable-proxy';
import { startOwnRedis } from '../test/helpers/own-redis';
import { closedLoop, loadColumns, machineLoad, median, percentile, QUICK, reportFigures, runBench, timed, within } from './lib/figures';
import { startBenchApi } from './lib/service-process';

const SECONDS = Number(process.argv[2] ?? (QUICK ? 3 : 4));
const RUNS = Number(process.argv[3] ?? (QUICK ? 2 : 3));
const CONCURRENCY = Number(process.env.BENCH_OUTAGE_CLIENTS ?? 16);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1 || CONCURRENCY > 256)
  throw new Error('BENCH_OUTAGE_CLIENTS: a whole number from 1 to 256');
const DATABASE_TIMEOUT_MS = 2_000;
const REQUEST_LIMIT_MS = 30_000;
const RECOVERY_LIMIT_MS = 30_000;
const CHAT = `mutation($content: String!) { aiAction(input: { chat: { content: $content } }) { requestId errors } }`;

type Reply = { data?: Record<string, unknown> | null; errors?: Array<{ extensions?: { code?: string } }> };
type Load = { perSecond: number; p50: number; p99: number; max: number; codes: Map<string, number> };
type Run = { trivial: Load; chat: Load; chatBackMs: number; messages: Load; messagesBackMs: number };

async function main(): Promise<void> {
  const redis = await startOwnRedis();
  let proxy: FreezableProxy | undefined;
  const service = await startBenchApi(
    'outage',
    {
      REDIS_URL: redis.url,
      DATABASE_REQUEST_TIMEOUT_MS: String(DATABASE_TIMEOUT_MS),
      RATE_LIMIT_PER_MINUTE: '10000000',
      AI_ACTION_RATE_LIMIT: '100000000',
    },
    {
      databaseUrl: async (direct) => {
        const target = new URL(direct);
        proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
        target.host = `127.0.0.1:${proxy.port}`;
        return target.toString();
      },
    },
  );
  try {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    /** The request's outcome: `ok`, or the first error's code. */
    const post = async (query: string, variables: Record<string, unknown> = {}): Promise<string> => {
      const reply = await within(
        fetch(`${service.url}/api/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
          body: JSON.stringify({ query, variables }),
        }).then((response) => response.json() as Promise<Reply>),
        REQUEST_LIMIT_MS,
        'a request got no answer',
      );
      const payloadErrors = (reply.data?.aiAction as { errors?: string[] } | null | undefined)?.errors ?? [];
      return reply.errors?.[0]?.extensions?.code ?? (payloadErrors.length > 0 ? 'errors' : 'ok');
    };
    const trivial = () => post('{ currentUser { id } }');
    const chat = () => post(CHAT, { content: 'How do I parse a URL in TypeScript?' });
    const messages = () => post('{ aiMessages(first: 5) { nodes { content } } }');

    const load = async (request: () => Promise<string>): Promise<Load> => {
      const codes = new Map<string, number>();
      const latencies = await closedLoop(
        CONCURRENCY,
        SECONDS,
        timed(async () => {
          const code = await request();
          codes.set(code, (codes.get(code) ?? 0) + 1);
        }),
      );
      return {
        perSecond: latencies.length / SECONDS,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: Math.max(...latencies),
        codes,
      };
    };
    const untilOk = async (request: () => Promise<string>, what: string) => {
      const started = performance.now();
      while ((await request()) !== 'ok') {
        if (performance.now() - started > RECOVERY_LIMIT_MS) throw new Error(`${what} was not answered again within 30 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return performance.now() - started;
    };

    for (let index = 0; index < 20; index += 1) await Promise.all([trivial(), messages()]);
    for (const [name, request] of [
      ['aiAction', chat],
      ['aiMessages', messages],
    ] as const) {
      if ((await request()) !== 'ok') throw new Error(`${name} failed before anything was stopped`);
    }

    const runs: Run[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      redis.pause();
      let trivialLoad: Load;
      let chatLoad: Load;
      try {
        trivialLoad = await load(trivial);
        chatLoad = await load(chat);
      } finally {
        redis.resume();
      }
      const chatBackMs = await untilOk(chat, 'aiAction');
      proxy!.freeze();
      let messagesLoad: Load;
      try {
        messagesLoad = await load(messages);
      } finally {
        proxy!.thaw();
      }
      const messagesBackMs = await untilOk(messages, 'aiMessages');
      runs.push({ trivial: trivialLoad, chat: chatLoad, chatBackMs, messages: messagesLoad, messagesBackMs });
      const outcomes = (one: Load) => [...one.codes].map(([code, count]) => `${code} ${count}`).join(', ');
      console.log(
        `  run ${run + 1}: Redis stopped: trivial p50 ${trivialLoad.p50.toFixed(1)} ms (${outcomes(trivialLoad)}), ` +
          `aiAction p50 ${chatLoad.p50.toFixed(1)} ms (${outcomes(chatLoad)}), accepted again ${chatBackMs.toFixed(0)} ms after; ` +
          `database frozen: aiMessages p50 ${messagesLoad.p50.toFixed(1)} ms (${outcomes(messagesLoad)}), ` +
          `answered again ${messagesBackMs.toFixed(0)} ms after`,
      );
    }

    const mid = (pick: (run: Run) => number) => median(runs.map(pick));
    const line = (name: string, which: 'trivial' | 'chat' | 'messages') =>
      `  ${name.padEnd(40)} ${loadColumns(runs.map((run) => run[which]))}   max ${mid((run) => run[which].max)
        .toFixed(0)
        .padStart(5)} ms`;
    console.log(`duo-slice outage bench: ${SECONDS} s per load, ${CONCURRENCY} clients, median of ${RUNS} runs`);
    console.log(line('Redis stopped: trivial query', 'trivial'));
    console.log(line('Redis stopped: aiAction', 'chat'));
    console.log(line(`database frozen: aiMessages (timeout ${DATABASE_TIMEOUT_MS / 1000} s)`, 'messages'));
    console.log(
      `  answered again after it came back: aiAction ${mid((run) => run.chatBackMs).toFixed(0)} ms (Redis), ` +
        `aiMessages ${mid((run) => run.messagesBackMs).toFixed(0)} ms (database)`,
    );
    console.log(`  ${machineLoad()}`);
    const unavailable = (which: 'chat' | 'messages') =>
      runs.every((run) => [...run[which].codes.keys()].every((code) => code === 'SERVICE_UNAVAILABLE'))
        ? ''
        : ' (some answers were not SERVICE_UNAVAILABLE)';
    reportFigures([
      {
        figure: `trivial query while Redis hangs (${CONCURRENCY} clients): p50 / max`,
        target: 'none',
        result: `${mid((run) => run.trivial.p50).toFixed(1)} / ${mid((run) => run.trivial.max).toFixed(0)} ms`,
        met: null,
      },
      {
        figure: 'aiAction while Redis hangs: p50 to its SERVICE_UNAVAILABLE / accepted again after Redis answers',
        target: 'none',
        result: `${mid((run) => run.chat.p50).toFixed(1)} / ${mid((run) => run.chatBackMs).toFixed(0)} ms${unavailable('chat')}`,
        met: null,
      },
      {
        figure:
          `aiMessages while PostgreSQL hangs (request timeout ${DATABASE_TIMEOUT_MS / 1000} s): ` +
          'p50 to its SERVICE_UNAVAILABLE / answered again',
        target: 'none',
        result:
          `${mid((run) => run.messages.p50).toFixed(1)} / ${mid((run) => run.messagesBackMs).toFixed(0)} ms` + unavailable('messages'),
        met: null,
      },
    ]);
  } finally {
    redis.resume();
    proxy?.thaw();
    await service.close();
    await proxy?.close();
    redis.stop();
  }
}

runBench(main);
