/**
 * Continuous code suggestion figures (prints them; never passes or fails on time).
 *
 *   node -r @swc-node/register bench/session.ts [rounds=10] [warm-up rounds=20]
 *
 * Runs the real service (API role) in a process of its own on PostgreSQL and Redis, with a stub
 * model that answers at once in this process with the clients (a real model is remote), opens 50
 * sessions with a graphql-ws subscription each, and sends one update per session per round, all
 * sessions at once (after unmeasured warm-up rounds): prints p50/p99 of the time from sending the
 * update to its first STREAMING event, and the same less the debounce (150 ms), i.e. the pipeline's own overhead, and the CPU
 * time per update of the service process (steadier than wall time on a shared machine) and of this
 * one (clients and stub). BENCH_CPU_PROF=<dir> writes a CPU profile of the service process there.
 */
import { wsClient } from '../test/helpers/chat-client';
import { groupWithSeat, userWithToken } from '../test/helpers/fixtures';
import { startStubLlmServer } from '../test/helpers/stub-llm-server';
import { DEFAULT_SESSION_TIMING } from '../src/suggestions/sessions/session-runner';
import { cpuMs, machineLoad, percentile, QUICK, reportFigures, runBench, within } from './lib/figures';
import { startBenchApi } from './lib/service-process';

const ROUNDS = Number(process.argv[2] ?? (QUICK ? 4 : 10));
/**
 * Unmeasured rounds first, in both modes: the figure is meant for warm code, as a long-running
 * service runs it. With one, the measured rounds still paid V8's optimising compiler (~30 % of the
 * service's CPU in a perf profile of rounds 1–8) and CPU per update fell from 4–5 ms in rounds 1–4
 * to ~2 ms by round 15.
 */
const WARMUP_ROUNDS = Number(process.argv[3] ?? 20);
const SESSIONS = 50;
/** Users the sessions belong to, ten each. */
const USERS = 5;
const FILE = 'import os\nimport sys\nimport json\nimport time\n\ndef total(items):\n    result = 0\n    ';

async function main() {
  const stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ['return ', 'result'] }, record: false });
  const service = await startBenchApi('session', {
    LLM_PROVIDER: 'openai',
    LLM_BASE_URL: stub.url,
    LLM_MODEL: 'stub',
    RATE_LIMIT_PER_MINUTE: '1000000',
    // Every generation a session starts spends the code-suggestions budget: the bench measures latency, not the limit.
    CODE_SUGGESTIONS_RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const url = service.url;
  const graphql = async <Data>(query: string, options: { token: string; variables: Record<string, unknown> }) => {
    const response = await fetch(`${url}/api/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
      body: JSON.stringify({ query, variables: options.variables }),
    });
    return { body: (await response.json()) as { data?: Data; errors?: unknown } };
  };
  try {
    // A user keeps at most 20 live sessions (older ones end): the sessions are spread over users, as in a team.
    const users = await Promise.all(
      Array.from({ length: USERS }, async () => {
        const user = await userWithToken(service.prisma);
        await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: user.username });
        return { ...user, client: wsClient(url, user.token) };
      }),
    );
    const sessions = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, index) => {
        const user = users[index % USERS];
        const client = user.client;
        const response = await graphql<{ codeSuggestionSessionStart: { sessionId: string } }>(
          'mutation($input: CodeSuggestionSessionStartInput!) { codeSuggestionSessionStart(input: $input) { sessionId } }',
          {
            token: user.token,
            variables: { input: { fileName: 'a.py', content: FILE, cursorOffset: FILE.length } },
          },
        );
        const sessionId = response.body.data!.codeSuggestionSessionStart.sessionId;
        const waiters = new Map<number, () => void>();
        client.subscribe<{ codeSuggestionUpdates: { revision: number; status: string } }>(
          { query: 'subscription($id: ID!) { codeSuggestionUpdates(sessionId: $id) { revision status } }', variables: { id: sessionId } },
          {
            next: (result) => {
              const update = result.data?.codeSuggestionUpdates;
              if (update?.status === 'STREAMING') waiters.get(update.revision)?.();
            },
            error: () => undefined,
            complete: () => undefined,
          },
        );
        return { sessionId, waiters, token: user.token };
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    let latencies: number[] = [];
    let [serviceBefore, benchBefore] = [cpuMs(service.pid), cpuMs()];
    let windowStart = process.hrtime.bigint();
    // The warm-up rounds are not measured: they run on cold code (the grammar's first load and
    // queries, code not yet optimised), which a long-running service pays once.
    for (let round = 1 - WARMUP_ROUNDS; round <= ROUNDS; round += 1) {
      if (round === 1) {
        latencies = [];
        [serviceBefore, benchBefore] = [cpuMs(service.pid), cpuMs()];
        windowStart = process.hrtime.bigint();
      }
      await Promise.all(
        sessions.map(async (session) => {
          const content = `${FILE}r${round + WARMUP_ROUNDS - 1}`;
          const revision = round + WARMUP_ROUNDS; // each update makes the next revision
          const started = performance.now();
          const streaming = new Promise<void>((resolve) => session.waiters.set(revision, resolve));
          await graphql('mutation($input: CodeSuggestionSessionUpdateInput!) { codeSuggestionSessionUpdate(input: $input) { revision } }', {
            token: session.token,
            variables: { input: { sessionId: session.sessionId, content, cursorOffset: content.length } },
          });
          await within(streaming, 30_000, `session ${session.sessionId} sent no STREAMING event for revision ${revision}`);
          latencies.push(performance.now() - started);
        }),
      );
    }
    // For reading a CPU profile (BENCH_CPU_PROF) over the measured rounds only: CLOCK_MONOTONIC, µs.
    if (process.env.BENCH_CPU_PROF)
      console.log(`  measured window (monotonic µs): ${windowStart / 1000n} ${process.hrtime.bigint() / 1000n}`);
    const serviceCpu = (cpuMs(service.pid) - serviceBefore) / (ROUNDS * SESSIONS);
    const benchCpu = (cpuMs() - benchBefore) / (ROUNDS * SESSIONS);
    const debounce = DEFAULT_SESSION_TIMING.debounceMs;
    const fmt = (value: number) => `${value.toFixed(1)} ms`;
    console.log(
      `update -> first STREAMING at ${SESSIONS} concurrent sessions, ${latencies.length} updates after ${WARMUP_ROUNDS} warm-up rounds`,
    );
    console.log(`  p50 ${fmt(percentile(latencies, 50))}  p99 ${fmt(percentile(latencies, 99))}  (debounce ${debounce} ms included)`);
    console.log(`  less debounce: p50 ${fmt(percentile(latencies, 50) - debounce)}  p99 ${fmt(percentile(latencies, 99) - debounce)}`);
    console.log(
      `  CPU per update: service process ${serviceCpu.toFixed(2)} ms; this process (clients and stub model) ${benchCpu.toFixed(2)} ms`,
    );
    console.log(`  ${machineLoad()}`);
    const beyond = percentile(latencies, 50) - debounce;
    reportFigures([
      {
        figure: `session update -> first STREAMING beyond the debounce, p50 (${SESSIONS} sessions)`,
        target: '60 ms',
        result: fmt(beyond),
        met: beyond <= 60,
      },
    ]);
    for (const user of users) await user.client.dispose();
  } finally {
    await service.close();
    await stub.close();
  }
}

runBench(main);
