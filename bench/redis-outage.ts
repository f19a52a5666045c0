/**
 * What a hung Redis costs requests (prints figures; never passes or fails on time).
 *
 *   node -r @swc-node/register bench/redis-outage.ts [seconds=4] [runs=3]
 *
 * Runs the API (`--role=api`) in a process of its own on PostgreSQL and a redis-server of the bench's own,
 * then, in each run, stops that Redis (SIGSTOP: its connections stay open, its replies stop) and for
 * `seconds` sends from 16 concurrent clients (BENCH_OUTAGE_CLIENTS=<n>):
 *  1. a trivial query (`{ currentUser { id } }`), which can do without Redis (its rate limit lets it through);
 *  2. aiAction, which cannot (its answer must be queued): it should fail with SERVICE_UNAVAILABLE, not wait;
 * then lets Redis go on (SIGCONT) and times how long until aiAction is accepted again (polled every 20 ms).
 * Each figure is the median over `runs` runs. Every request and wait has a time limit.
 */
import { groupWithSeat, userWithToken } from '../test/helpers/fixtures';
import { startOwnRedis } from '../test/helpers/own-redis';
import { closedLoop, machineLoad, median, percentile, QUICK, reportFigures, runBench, timed, within } from './lib/figures';
import { startBenchApi } from './lib/service-process';

const SECONDS = Number(process.argv[2] ?? (QUICK ? 3 : 4));
const RUNS = Number(process.argv[3] ?? (QUICK ? 2 : 3));
const CONCURRENCY = Number(process.env.BENCH_OUTAGE_CLIENTS ?? 16);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1 || CONCURRENCY > 256)
  throw new Error('BENCH_OUTAGE_CLIENTS: a whole number from 1 to 256');
const REQUEST_LIMIT_MS = 30_000;
const RECOVERY_LIMIT_MS = 30_000;
const CHAT = `mutation($content: String!) { aiAction(input: { chat: { content: $content } }) { requestId errors } }`;

type Reply = { data?: Record<string, unknown> | null; errors?: Array<{ extensions?: { code?: string } }> };
type Load = { answered: number; p50: number; p99: number; max: number };

async function main(): Promise<void> {
  const redis = await startOwnRedis();
  const service = await startBenchApi('redis-outage', {
    REDIS_URL: redis.url,
    RATE_LIMIT_PER_MINUTE: '10000000',
    AI_ACTION_RATE_LIMIT: '100000000',
  });
  try {
    const user = await userWithToken(service.prisma);
    await groupWithSeat(service.prisma, { plan: 'ultimate', addOn: 'duo_enterprise', username: user.username });
    const post = (query: string, variables: Record<string, unknown> = {}) =>
      within(
        fetch(`${service.url}/api/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
          body: JSON.stringify({ query, variables }),
        }).then((reply) => reply.json() as Promise<Reply>),
        REQUEST_LIMIT_MS,
        'a request got no answer',
      );
    const trivial = async () => {
      const reply = await post('{ currentUser { id } }');
      if (!reply.data?.currentUser) throw new Error(`the trivial query failed: ${JSON.stringify(reply).slice(0, 300)}`);
    };
    const chat = async () => {
      const reply = await post(CHAT, { content: 'How do I parse a URL in TypeScript?' });
      return (
        reply.errors?.[0]?.extensions?.code ?? ((reply.data?.aiAction as { errors: string[] } | null)?.errors.length ? 'errors' : 'ok')
      );
    };
    const load = async (request: () => Promise<void>): Promise<Load> => {
      const latencies = await closedLoop(CONCURRENCY, SECONDS, timed(request));
      return { answered: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies) };
    };
    const untilChatWorks = async () => {
      const started = performance.now();
      while ((await chat()) !== 'ok') {
        if (performance.now() - started > RECOVERY_LIMIT_MS)
          throw new Error('aiAction was not accepted again within 30 s of Redis answering');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return performance.now() - started;
    };

    for (let index = 0; index < 20; index += 1) await trivial();
    if ((await chat()) !== 'ok') throw new Error('aiAction failed before Redis was stopped');
    const runs: Array<{ trivial: Load; chat: Load; codes: Map<string, number>; recoveryMs: number }> = [];
    for (let run = 0; run < RUNS; run += 1) {
      redis.pause();
      let trivialLoad: Load;
      let chatLoad: Load;
      const codes = new Map<string, number>();
      try {
        trivialLoad = await load(trivial);
        chatLoad = await load(async () => {
          const code = await chat();
          codes.set(code, (codes.get(code) ?? 0) + 1);
        });
      } finally {
        redis.resume();
      }
      const recoveryMs = await untilChatWorks();
      runs.push({ trivial: trivialLoad, chat: chatLoad, codes, recoveryMs });
      const outcomes = [...codes].map(([code, count]) => `${code} ${count}`).join(', ');
      console.log(
        `  run ${run + 1}: trivial ${(trivialLoad.answered / SECONDS).toFixed(0)} req/s p50 ${trivialLoad.p50.toFixed(1)} ms; ` +
          `aiAction ${(chatLoad.answered / SECONDS).toFixed(0)} req/s p50 ${chatLoad.p50.toFixed(1)} ms (${outcomes}); ` +
          `accepted again ${recoveryMs.toFixed(0)} ms after Redis went on`,
      );
    }
    const mid = (pick: (run: (typeof runs)[number]) => number) => median(runs.map(pick));
    const line = (name: string, which: 'trivial' | 'chat') =>
      `  ${name.padEnd(30)} ${(mid((run) => run[which].answered) / SECONDS).toFixed(0).padStart(6)} req/s   p50 ${mid(
        (run) => run[which].p50,
      )
        .toFixed(1)
        .padStart(7)} ms   p99 ${mid((run) => run[which].p99)
        .toFixed(1)
        .padStart(7)} ms   max ${mid((run) => run[which].max)
        .toFixed(0)
        .padStart(5)} ms`;
    console.log(
      `duo-slice Redis outage bench: Redis stopped (SIGSTOP) ${SECONDS} s per load, ${CONCURRENCY} clients, median of ${RUNS} runs`,
    );
    console.log(line('trivial query', 'trivial'));
    console.log(line('aiAction (SERVICE_UNAVAILABLE)', 'chat'));
    console.log(`  aiAction accepted again after Redis went on: median ${mid((run) => run.recoveryMs).toFixed(0)} ms`);
    console.log(`  ${machineLoad()}`);
    const unavailable = runs.every((run) => [...run.codes.keys()].every((code) => code === 'SERVICE_UNAVAILABLE'));
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
        result:
          `${mid((run) => run.chat.p50).toFixed(1)} / ${mid((run) => run.recoveryMs).toFixed(0)} ms` +
          (unavailable ? '' : ' (some answers were not SERVICE_UNAVAILABLE)'),
        met: null,
      },
    ]);
  } finally {
    redis.resume();
    await service.close();
    redis.stop();
  }
}

runBench(main);
