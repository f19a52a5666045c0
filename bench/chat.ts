/**
 * Chat pipeline figures (prints them; never passes or fails on time).
 *
 *   node -r @swc-node/register bench/chat.ts [seconds=5] [runs=3]
 *
 * Runs the real service on PostgreSQL and Redis, the API and the workers each in a process of its
 * own (as `npm start -- --role=api` and `npm run start:worker`; the worker at WORKER_NICE, 10 unless
 * set), with a stub model that streams its answer at once in this process with the clients (a real
 * model is remote: its CPU is not the service's), and measures:
 *  1. aiAction latency (p50/p99) and throughput at 16 concurrent clients (BENCH_CHAT_CLIENTS=<n> for
 *     another number; the table's figure is the one at 16), beside the same figures
 *     for a trivial query (`{ currentUser { id } }`) on the same server, and their ratio;
 *  2. the same aiAction load with the chat queue paused (its jobs wait, then are drained): the
 *     mutation's own cost, as with workers on machines of their own;
 *  3. the pipeline's own overhead: from sending the mutation to the first chunk arriving over
 *     ActionCable, one request at a time.
 * Each figure is the median over `runs` runs. Beside the latencies it prints the CPU time per
 * request of the API process and of the worker process (not the bench's clients nor the stub):
 * on a shared machine these vary far less than wall time. It also prints the whole machine's CPU
 * per request in each load and who spent it (bench/lib/machine-cpu.ts): while the clients keep
 * every core busy, the latency ratio follows the ratio of these. The worker, second in line for the cores,
 * answers part of the aiAction phase's jobs after it: the bench prints how long that backlog took and
 * the worker's CPU per aiAction over the phase and the backlog together. Measured runs follow
 * BENCH_CHAT_WARM_ROUNDS (default 4) unmeasured rounds of the same loads, each printed. BENCH_CPU_PROF=<dir>
 * writes a CPU profile of each service process there. Prompts are clear questions; the first-chunk measure
 * skips the gatekeeper (it is the worker pipeline's figure), and a first chunk that arrives before
 * the mutation's answer (the gatekeeper answers in the API) is still matched to its request id.
 * Every wait has a time limit and says what never arrived.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import WebSocket from 'ws';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { assignSeat, buyAddOn, createGroup } from '../src/namespaces/namespaces.service';
import { createToken, createUser } from '../src/users/users.service';
import { openDatabase } from '../src/db/database';
import { QUEUE_NAMES } from '../src/queues';
import { bullPrefix } from '../src/redis-keys';
import { Queue } from 'bullmq';
import { startStubLlmServer } from '../test/helpers/stub-llm-server';
import { deleteRedisKeys } from '../test/helpers/test-service';
import {
  closedLoop,
  cpuMs,
  loadColumns,
  machineLoad,
  median,
  percentile,
  QUICK,
  reportFigures,
  runBench,
  timed,
  within,
} from './lib/figures';
import { cpuShares, formatShares, readCpu, type CpuParts, type CpuShares } from './lib/machine-cpu';
import { startServiceProcess } from './lib/service-process';

const SECONDS = Number(process.argv[2] ?? (QUICK ? 2 : 5));
// Three runs in quick mode too: one 2-second run swung between 2.1x and 4.2x on one quiet machine within 15 minutes
// (its trivial query was at times still being compiled), and a median of three is steadier for ~10 s more.
const RUNS = Number(process.argv[3] ?? 3);
const SAMPLES = QUICK ? 30 : 100;
const WARM_ROUNDS = Number(process.env.BENCH_CHAT_WARM_ROUNDS ?? 4);
if (!Number.isInteger(WARM_ROUNDS) || WARM_ROUNDS < 0 || WARM_ROUNDS > 20)
  throw new Error('BENCH_CHAT_WARM_ROUNDS: a whole number from 0 to 20');
const WAIT_MS = 30_000;
const CONCURRENCY = Number(process.env.BENCH_CHAT_CLIENTS ?? 16);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1 || CONCURRENCY > 256)
  throw new Error('BENCH_CHAT_CLIENTS: a whole number from 1 to 256');
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** `machine`: CPU per request, the whole machine's and by part (the API process, the worker process, …). */
type Load = { p50: number; p99: number; perSecond: number; machine: CpuShares };
/** The worker's backlog after an aiAction load: how long it took, and the worker's CPU per aiAction over both. */
type Round = { trivial: Load; action: Load; backlog: { drainMs: number; workerCpu: number } };

async function load(request: () => Promise<void>, parts: CpuParts): Promise<Load> {
  const before = await readCpu(parts);
  const latencies = await closedLoop(CONCURRENCY, SECONDS, timed(request));
  const machine = cpuShares(before, await readCpu(parts), latencies.length);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    perSecond: latencies.length / SECONDS,
    machine,
  };
}

function graphql(url: string, token: string, query: string, variables: Record<string, unknown> = {}) {
  return async () => {
    const response = await fetch(`${url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { errors?: unknown };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
  };
}

const CHAT =
  'mutation($q: String!, $c: String, $skip: Boolean) { aiAction(input: { chat: { content: $q, skipGatekeeper: $skip }, ' +
  'clientSubscriptionId: $c }) { requestId errors } }';
// A prompt the gatekeeper finds CLEAR (GENERAL_QUESTION): the mutation stores it and enqueues the answer.
const QUESTION = 'How do I parse a URL?';
const SUBSCRIPTION =
  'subscription($userId: UserID, $c: String) { aiCompletionResponse(userId: $userId, aiAction: CHAT, clientSubscriptionId: $c) { ' +
  'requestId chunkId content } }';

/** Mutation to first chunk over ActionCable, one request at a time, in milliseconds. */
async function firstChunkOverhead(url: string, token: string, userId: number, samples: number): Promise<number[]> {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/-/cable`, ['actioncable-v1-json'], {
    headers: { Authorization: `Bearer ${token}` },
  });
  const clientSubscriptionId = randomBytes(8).toString('hex');
  const identifier = JSON.stringify({
    channel: 'GraphqlChannel',
    query: SUBSCRIPTION,
    variables: JSON.stringify({ userId: `gid://gitlab/User/${userId}`, c: clientSubscriptionId }),
    operationName: null,
  });
  // When each request's first chunk arrived, whether or not the mutation has answered yet.
  const arrivals = new Map<string, number>();
  const waiters = new Map<string, (at: number) => void>();
  await within(
    new Promise<void>((resolve, reject) => {
      socket.on('error', reject);
      socket.on('message', (raw) => {
        type Frame = {
          type?: string;
          message?: { result?: { data?: { aiCompletionResponse?: { chunkId?: number | null; requestId: string } | null } } };
        };
        const frame = JSON.parse((raw as Buffer).toString('utf8')) as Frame;
        if (frame.type === 'welcome') socket.send(JSON.stringify({ command: 'subscribe', identifier }));
        if (frame.type === 'confirm_subscription') resolve();
        const message = frame.message?.result?.data?.aiCompletionResponse;
        if (message?.chunkId === 1 && !arrivals.has(message.requestId)) {
          const at = performance.now();
          arrivals.set(message.requestId, at);
          waiters.get(message.requestId)?.(at);
        }
      });
    }),
    WAIT_MS,
    'the ActionCable subscription was not confirmed',
  );
  const overheads: number[] = [];
  for (let index = 0; index < samples; index += 1) {
    const started = performance.now();
    const response = await fetch(`${url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: CHAT, variables: { q: QUESTION, c: clientSubscriptionId, skip: true } }),
    });
    const body = (await response.json()) as { data?: { aiAction: { requestId: string } }; errors?: unknown };
    const requestId = body.data?.aiAction.requestId;
    if (!requestId) throw new Error(`aiAction failed: ${JSON.stringify(body.errors)}`);
    const arrived =
      arrivals.get(requestId) ??
      (await within(
        new Promise<number>((resolve) => waiters.set(requestId, resolve)),
        WAIT_MS,
        `the first chunk of request ${requestId} never arrived over ActionCable`,
      ));
    overheads.push(arrived - started);
    waiters.delete(requestId);
    arrivals.delete(requestId);
  }
  socket.close();
  return overheads;
}

async function main(): Promise<void> {
  const stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ['Hello', ' there', '.'] }, record: false });
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const name = `duo_bench_chat_${process.pid}`;
  await admin.query(`CREATE DATABASE "${name}"`);
  const databaseUrl = new URL(ADMIN_URL);
  databaseUrl.pathname = `/${name}`;
  const env = {
    DATABASE_URL: databaseUrl.toString(),
    PORT: '0',
    LOG_LEVEL: 'error',
    REDIS_PREFIX: `duobench:chat${process.pid}`,
    RATE_LIMIT_PER_MINUTE: '10000000',
    AI_ACTION_RATE_LIMIT: '100000000',
    LLM_PROVIDER: 'openai',
    LLM_BASE_URL: stub.url,
    LLM_MODEL: 'stub',
    DATA_DIR: `/tmp/duo-bench-chat-${process.pid}`,
  };
  const config = loadConfig(env);
  // The API migrates the new database before it serves; the worker starts after it.
  const api = await startServiceProcess('api', env);
  const worker = await startServiceProcess('worker', env);
  const database = await openDatabase({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    logger: createLogger('error'),
    embeddedRole: 'client',
  });
  const redis = new Redis(config.redisUrl);
  const chatQueue = new Queue(QUEUE_NAMES.chat, { connection: redis, prefix: bullPrefix(config.redisPrefix) });
  const drained = async () => {
    const deadline = performance.now() + 5 * 60_000;
    for (;;) {
      const counts = await chatQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      if (Object.values(counts).every((count) => count === 0)) return;
      if (performance.now() > deadline) throw new Error(`the chat queue was not drained within 5 min: ${JSON.stringify(counts)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  try {
    const prisma = database.prisma;
    const user = await createUser(prisma, { username: 'bench' });
    const group = await createGroup(prisma, { path: 'bench', plan: 'ultimate' });
    await buyAddOn(prisma, { groupPath: group.fullPath, addOn: 'duo_enterprise', seats: 1 });
    await assignSeat(prisma, { groupPath: group.fullPath, addOn: 'duo_enterprise', username: user.username });
    const { token } = await createToken(prisma, { username: user.username });
    const url = api.url!;
    // Warm up both paths; the worker process is starting meanwhile (the first chunk waits for it).
    await graphql(url, token, '{ currentUser { id } }')();
    await graphql(url, token, CHAT, { q: QUESTION, c: null })();
    await within(firstChunkOverhead(url, token, user.id, 1), 120_000, 'the worker process answered no chat request');
    /**
     * The mutation alone: the chat queue is paused for the load (its jobs wait, as for workers on
     * machines of their own), then resumed and drained. The API does the same work as in the all-in-one
     * figure; only the answers, and what they cost PostgreSQL, Redis and the stub model, leave the cores.
     */
    const parts: CpuParts = { apiPid: api.pid, workerPid: worker.pid, redis, adminUrl: ADMIN_URL, database: name };
    const loadTrivial = () => load(graphql(url, token, '{ currentUser { id } }'), parts);
    const loadChat = () => load(graphql(url, token, CHAT, { q: QUESTION, c: null }), parts);
    const chatWithAnswersElsewhere = async (): Promise<Load> => {
      await chatQueue.pause();
      try {
        return await loadChat();
      } finally {
        await chatQueue.resume();
        await drained();
      }
    };
    /** One trivial-query load, one aiAction load, and the wait for the backlog the worker left. */
    const round = async (): Promise<Round> => {
      const trivialStart = process.hrtime.bigint();
      const trivialLoad = await loadTrivial();
      const actionStart = process.hrtime.bigint();
      const workerBefore = cpuMs(worker.pid);
      const actionLoad = await loadChat();
      const actionEnd = process.hrtime.bigint();
      // The worker runs at WORKER_NICE: under this load it answers part of the jobs after it.
      const loadEnded = performance.now();
      await drained();
      // The phases' CLOCK_MONOTONIC windows in µs, for reading a CPU profile over them (BENCH_CPU_PROF,
      // or `perf record -k CLOCK_MONOTONIC` with BENCH_WINDOWS=1).
      if (process.env.BENCH_CPU_PROF || process.env.BENCH_WINDOWS)
        console.log(
          `  windows (monotonic µs): trivial ${trivialStart / 1000n} ${actionStart / 1000n}, ` +
            `aiAction ${actionStart / 1000n} ${actionEnd / 1000n}`,
        );
      const drainMs = performance.now() - loadEnded;
      return {
        trivial: trivialLoad,
        action: actionLoad,
        backlog: { drainMs, workerCpu: (cpuMs(worker.pid) - workerBefore) / (actionLoad.perSecond * SECONDS) },
      };
    };
    // Warm-up rounds, not measured. V8 compiles a function once it has run enough, and the worker,
    // second in line for the cores, runs each of its functions once per job: after one round it was
    // still compiling (TurboFan ~12 % of its CPU in the next aiAction phase, functions such as
    // saveAssistantMessage and moveToFinished compiled for the first time), and every process's CPU per
    // request kept falling for three to four rounds. Each round prints it, to show where it settles.
    for (let index = 0; index < WARM_ROUNDS; index += 1) {
      const { trivial, action, backlog } = await round();
      console.log(
        `  warm-up ${index + 1}/${WARM_ROUNDS}: CPU per request, trivial: API ${trivial.machine.api.toFixed(2)} ms; aiAction: API ` +
          `${action.machine.api.toFixed(2)} ms, worker ${backlog.workerCpu.toFixed(2)} ms (load and backlog); ` +
          `p50 ${trivial.p50.toFixed(1)} / ${action.p50.toFixed(1)} ms`,
      );
    }

    const trivial: Load[] = [];
    const action: Load[] = [];
    const overhead: number[][] = [];
    const backlog: Array<{ drainMs: number; workerCpu: number }> = [];
    const isolated: Load[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const measured = await round();
      trivial.push(measured.trivial);
      action.push(measured.action);
      backlog.push(measured.backlog);
      isolated.push(await chatWithAnswersElsewhere());
      overhead.push(await firstChunkOverhead(url, token, user.id, SAMPLES));
    }
    const row = (label: string, loads: Load[]) =>
      `  ${label.padEnd(28)} ${loadColumns(loads)}   CPU per request: API ${median(loads.map((l) => l.machine.api)).toFixed(2)} ms, ` +
      `worker ${median(loads.map((l) => l.machine.worker)).toFixed(2)} ms`;
    console.log(
      `duo-slice chat bench: ${CONCURRENCY} concurrent clients, ${SECONDS} s per measure, median of ${RUNS} runs, node ` +
        `${process.version}; ${machineLoad()}`,
    );
    console.log(row('trivial query', trivial));
    console.log(row('aiAction (store + enqueue)', action));
    console.log(
      `  ratio aiAction/trivial       p50 ${(median(action.map((l) => l.p50)) / median(trivial.map((l) => l.p50))).toFixed(2)}x   p99 ` +
        `${(median(action.map((l) => l.p99)) / median(trivial.map((l) => l.p99))).toFixed(2)}x   throughput ` +
        `${(median(action.map((l) => l.perSecond)) / median(trivial.map((l) => l.perSecond))).toFixed(2)}x`,
    );
    console.log(row('aiAction, answers elsewhere', isolated));
    const isolatedRatio = median(isolated.map((l) => l.p50)) / median(trivial.map((l) => l.p50));
    console.log(
      `  ratio, answers elsewhere     p50 ${isolatedRatio.toFixed(2)}x   (the chat queue paused during the load: the worker's ` +
        `answers, and their database, Redis and model work, off these cores)`,
    );
    // The whole machine's CPU per request: with every core busy, the p50 ratio follows this ratio.
    const shares = (loads: Load[]): CpuShares => {
      const keys = Object.keys(loads[0].machine) as Array<keyof CpuShares>;
      return Object.fromEntries(keys.map((key) => [key, median(loads.map((l) => l.machine[key]))])) as CpuShares;
    };
    const [trivialShares, actionShares] = [shares(trivial), shares(action)];
    const machineRatio = actionShares.machine / trivialShares.machine;
    console.log(`  the machine's CPU per request (all processes, /proc/stat; medians of the runs)`);
    console.log(`    trivial query                ${formatShares(trivialShares)}`);
    console.log(`    aiAction                     ${formatShares(actionShares)}`);
    console.log(`    aiAction, answers elsewhere  ${formatShares(shares(isolated))}`);
    console.log(
      `    ratio aiAction/trivial       ${machineRatio.toFixed(2)}x (what the p50 ratio follows while the load keeps every core busy)`,
    );
    const workerNice = loadConfig({ ...process.env, ...env }).workerNice;
    console.log(
      `  chat queue drained ${median(backlog.map((b) => b.drainMs)).toFixed(0)} ms after the aiAction load; worker CPU per aiAction, ` +
        `load and backlog: ${median(backlog.map((b) => b.workerCpu)).toFixed(2)} ms (WORKER_NICE ${workerNice})`,
    );
    const p50s = overhead.map((samples) => percentile(samples, 50));
    const p99s = overhead.map((samples) => percentile(samples, 99));
    console.log(
      `  mutation -> first chunk over ActionCable (stub model streams at once, ${SAMPLES} sequential requests per run, gatekeeper skipped)`,
    );
    console.log(
      `                               p50 ${median(p50s).toFixed(1).padStart(6)} ms   p99 ${median(p99s).toFixed(1).padStart(6)} ms   ` +
        `(runs p50: ${p50s.map((v) => v.toFixed(1)).join(', ')})`,
    );
    const ratio = median(action.map((l) => l.p50)) / median(trivial.map((l) => l.p50));
    reportFigures([
      {
        figure: `aiAction / trivial query, p50 (${CONCURRENCY} clients)`,
        target: '2x',
        result:
          `${ratio.toFixed(2)}x (${median(action.map((l) => l.p50)).toFixed(1)} / ${median(trivial.map((l) => l.p50)).toFixed(1)} ` + `ms)`,
        met: ratio <= 2,
      },
      {
        figure: 'same, answers generated elsewhere (chat queue paused in the load)',
        target: 'none',
        result: `${isolatedRatio.toFixed(2)}x (${median(isolated.map((l) => l.p50)).toFixed(1)} ms)`,
        met: null,
      },
      {
        figure: 'machine CPU per request, aiAction / trivial query (all processes)',
        target: 'none',
        result: `${machineRatio.toFixed(2)}x (${actionShares.machine.toFixed(2)} / ${trivialShares.machine.toFixed(2)} ms)`,
        met: null,
      },
      { figure: 'aiAction -> first chunk over ActionCable, p50', target: 'none', result: `${median(p50s).toFixed(1)} ms`, met: null },
    ]);
  } finally {
    await chatQueue.close();
    redis.disconnect();
    await worker.close();
    await api.close();
    await database.close();
    await stub.close();
    // Its jobs, queues and events under its own prefix: left behind, every run added ~1,000 keys.
    await deleteRedisKeys(env.REDIS_PREFIX);
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

runBench(main);
