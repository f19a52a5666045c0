/**
 * Code suggestion figures: the language server's hottest call (prints them; never passes or fails on time).
 *
 *   node -r @swc-node/register bench/completions.ts [seconds=5] [runs=3]
 *
 * Runs the service (API role, as `npm start -- --role=api`) in a process of its own on PostgreSQL and
 * Redis, with a stub model that streams its answer at once in this process with the clients (a real
 * model is remote: its CPU is not the service's). 16 clients (BENCH_COMPLETIONS_CLIENTS=<n>) send, each
 * load in turn, for `seconds`:
 *  - a trivial query (`{ currentUser { id } }`), the yardstick;
 *  - `POST /api/v4/code_suggestions/completions` as GitLab's language server sends it (its v2 body),
 *    on a small file and on a realistic 2,000-line TypeScript file with the cursor near the middle, on
 *    one of 16 rows in turn (intent detection parses around the cursor, the prompt carries the text
 *    around it);
 *  - the same large request streamed (`stream: true`, `X-Supports-Sse-Streaming`): the time to the
 *    first `content_chunk` event and to the end.
 * Each figure is the median over `runs` runs, after BENCH_COMPLETIONS_WARM_ROUNDS (default 3) unmeasured
 * rounds of the same loads. Beside each load it prints the CPU per request of the service process, of
 * this process (clients and stub) and of the whole machine. Requests are spread over 64 users, each
 * with a token and a Duo seat, as many IDEs would send them; the per-user limits are raised so that
 * none is refused. Every wait has a time limit and says what never arrived.
 */
import { groupWithSeat, userWithToken } from '../test/helpers/fixtures';
import { startStubLlmServer } from '../test/helpers/stub-llm-server';
import { cursorAtRow, realisticSource } from '../test/suggestions/helpers/realistic-source';
import { closedLoop, cpuMs, loadColumns, machineLoad, median, percentile, QUICK, reportFigures, runBench, within } from './lib/figures';
import { machineCpuMs } from './lib/machine-cpu';
import { startBenchApi } from './lib/service-process';

const SECONDS = Number(process.argv[2] ?? (QUICK ? 2 : 5));
const RUNS = Number(process.argv[3] ?? 3);
const WARM_ROUNDS = Number(process.env.BENCH_COMPLETIONS_WARM_ROUNDS ?? 3);
if (!Number.isInteger(WARM_ROUNDS) || WARM_ROUNDS < 0 || WARM_ROUNDS > 20)
  throw new Error('BENCH_COMPLETIONS_WARM_ROUNDS: a whole number from 0 to 20');
const CONCURRENCY = Number(process.env.BENCH_COMPLETIONS_CLIENTS ?? 16);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1 || CONCURRENCY > 256)
  throw new Error('BENCH_COMPLETIONS_CLIENTS: a whole number from 1 to 256');
const USERS = 64;
/** One request's time limit: a request that never answers ends the bench with this message. */
const REQUEST_LIMIT_MS = 30_000;

type Sample = { latency: number; firstChunk?: number };
type Load = { p50: number; p99: number; firstChunkP50: number | null; perSecond: number; api: number; bench: number; machine: number };

/** What GitLab's language server sends (src/common/suggestion_client/create_v2_request.ts). */
function lspBody(fileName: string, above: string, below: string, stream: boolean) {
  return JSON.stringify({
    prompt_version: 1,
    project_path: 'bench/project',
    project_id: -1,
    current_file: { file_name: fileName, content_above_cursor: above, content_below_cursor: below },
    choices_count: 1,
    ...(stream ? { stream: true } : {}),
  });
}

const SMALL = lspBody('src/total.ts', 'export function total(items: number[]): number {\n  const sum = ', '\n}\n', false);
const LARGE_FILE = realisticSource('typescript', 2_000);
/** The large file's bodies, the cursor on one of 16 rows around the middle: each request takes the next. */
const largeBodies = (stream: boolean) =>
  Array.from({ length: 16 }, (_, index) => {
    const { contentAboveCursor, contentBelowCursor } = cursorAtRow(LARGE_FILE, 992 + index);
    return lspBody('src/store.ts', contentAboveCursor, contentBelowCursor, stream);
  });
const LARGE = largeBodies(false);
const LARGE_STREAMED = largeBodies(true);

async function main(): Promise<void> {
  const stub = await startStubLlmServer({ defaultBehaviour: { kind: 'stream', pieces: ['return ', 'result;'] }, record: false });
  const service = await startBenchApi('completions', {
    LLM_PROVIDER: 'openai',
    LLM_BASE_URL: stub.url,
    LLM_MODEL: 'stub',
    RATE_LIMIT_PER_MINUTE: '10000000',
    CODE_SUGGESTIONS_RATE_LIMIT_PER_MINUTE: '10000000',
  });
  try {
    const tokens: string[] = [];
    for (let index = 0; index < USERS; index += 1) {
      const user = await userWithToken(service.prisma);
      await groupWithSeat(service.prisma, { plan: 'premium', addOn: 'duo_pro', username: user.username });
      tokens.push(user.token);
    }
    const url = service.url;
    let next = 0;
    const token = () => tokens[(next += 1) % tokens.length];

    const trivial = async (): Promise<Sample> => {
      const started = performance.now();
      const response = await fetch(`${url}/api/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}` },
        body: JSON.stringify({ query: '{ currentUser { id } }' }),
      });
      const body = (await response.json()) as { data?: { currentUser: { id: string } | null }; errors?: unknown };
      if (!body.data?.currentUser) throw new Error(`the trivial query failed: ${JSON.stringify(body)}`);
      return { latency: performance.now() - started };
    };
    let turn = 0;
    const completion = (bodies: string[]) => async (): Promise<Sample> => {
      const body = bodies[(turn += 1) % bodies.length];
      const started = performance.now();
      const response = await fetch(`${url}/api/v4/code_suggestions/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}` },
        body,
      });
      const answer = (await response.json()) as { choices?: Array<{ text: string }> };
      if (response.status !== 200 || !answer.choices?.[0]?.text)
        throw new Error(`a completion failed (${response.status}): ${JSON.stringify(answer)}`);
      return { latency: performance.now() - started };
    };
    const streamed = async (): Promise<Sample> => {
      const started = performance.now();
      const response = await fetch(`${url}/api/v4/code_suggestions/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}`, 'X-Supports-Sse-Streaming': 'true' },
        body: LARGE_STREAMED[(turn += 1) % LARGE_STREAMED.length],
      });
      if (response.status !== 200 || response.headers.get('x-streaming-format') !== 'sse' || !response.body)
        throw new Error(`a streamed completion was not streamed (${response.status}): ${await response.text()}`);
      let firstChunk: number | undefined;
      let text = '';
      const decoder = new TextDecoder();
      for await (const piece of response.body) {
        text += decoder.decode(piece as Uint8Array, { stream: true });
        if (firstChunk === undefined && text.includes('event: content_chunk')) firstChunk = performance.now() - started;
      }
      if (firstChunk === undefined || !text.includes('event: stream_end'))
        throw new Error(`a streamed completion sent no content_chunk or no stream_end: ${text.slice(0, 300)}`);
      return { latency: performance.now() - started, firstChunk };
    };

    const load = async (label: string, request: () => Promise<Sample>): Promise<Load> => {
      const [apiBefore, benchBefore, machineBefore] = [cpuMs(service.pid), cpuMs(), machineCpuMs()];
      const samples = await closedLoop(CONCURRENCY, SECONDS, () =>
        within(request(), REQUEST_LIMIT_MS, `a request of the ${label} load got no answer`),
      );
      const count = samples.length;
      const firstChunks = samples.flatMap((sample) => (sample.firstChunk === undefined ? [] : [sample.firstChunk]));
      return {
        p50: percentile(
          samples.map((sample) => sample.latency),
          50,
        ),
        p99: percentile(
          samples.map((sample) => sample.latency),
          99,
        ),
        firstChunkP50: firstChunks.length > 0 ? percentile(firstChunks, 50) : null,
        perSecond: count / SECONDS,
        api: (cpuMs(service.pid) - apiBefore) / count,
        bench: (cpuMs() - benchBefore) / count,
        machine: (machineCpuMs() - machineBefore) / count,
      };
    };
    const LOADS: Array<[string, () => Promise<Sample>]> = [
      ['trivial query', trivial],
      ['completion, small file', completion([SMALL])],
      ['completion, 2,000 lines', completion(LARGE)],
      ['streamed, 2,000 lines', streamed],
    ];
    const round = async () => {
      const loads: Load[] = [];
      for (const [label, request] of LOADS) loads.push(await load(label, request));
      return loads;
    };
    for (let index = 0; index < WARM_ROUNDS; index += 1) {
      const loads = await round();
      console.log(
        `  warm-up ${index + 1}/${WARM_ROUNDS}: service CPU per request ` +
          loads.map((measured, at) => `${LOADS[at][0]} ${measured.api.toFixed(2)} ms`).join(', '),
      );
    }
    const runs: Load[][] = [];
    for (let run = 0; run < RUNS; run += 1) runs.push(await round());
    const figure = (at: number, pick: (measured: Load) => number) => median(runs.map((loads) => pick(loads[at])));

    console.log(
      `duo-slice code suggestion bench: ${CONCURRENCY} concurrent clients over ${USERS} users, ${SECONDS} s per load, median of ` +
        `${RUNS} runs, node ${process.version}; ${machineLoad()}`,
    );
    LOADS.forEach(([label], at) => {
      const firstChunk =
        runs[0][at].firstChunkP50 === null ? '' : `   first chunk p50 ${figure(at, (l) => l.firstChunkP50!).toFixed(1)} ms`;
      console.log(
        `  ${label.padEnd(26)} ${loadColumns(runs.map((loads) => loads[at]))}   ` +
          `CPU per request: service ${figure(at, (l) => l.api).toFixed(2)} ms, clients and stub ` +
          `${figure(at, (l) => l.bench).toFixed(2)} ms, machine ${figure(at, (l) => l.machine).toFixed(2)} ms${firstChunk}`,
      );
    });
    const ratio = (at: number) => figure(at, (l) => l.p50) / figure(0, (l) => l.p50);
    console.log(
      `  ratio to the trivial query, p50: small ${ratio(1).toFixed(2)}x, 2,000 lines ${ratio(2).toFixed(2)}x, ` +
        `streamed ${ratio(3).toFixed(2)}x`,
    );
    reportFigures([
      {
        figure: `completion of a 2,000-line file / trivial query, p50 (${CONCURRENCY} clients)`,
        target: 'none',
        result: `${ratio(2).toFixed(2)}x (${figure(2, (l) => l.p50).toFixed(1)} / ${figure(0, (l) => l.p50).toFixed(1)} ms)`,
        met: null,
      },
      {
        figure: 'service CPU per completion, small file / 2,000 lines',
        target: 'none',
        result: `${figure(1, (l) => l.api).toFixed(2)} / ${figure(2, (l) => l.api).toFixed(2)} ms`,
        met: null,
      },
      {
        figure: `streamed completion of a 2,000-line file: first chunk p50 (${CONCURRENCY} clients)`,
        target: 'none',
        result: `${figure(3, (l) => l.firstChunkP50!).toFixed(1)} ms`,
        met: null,
      },
    ]);
  } finally {
    await service.close();
    await stub.close();
  }
}

runBench(main);
