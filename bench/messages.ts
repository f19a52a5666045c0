/**
 * Chat history figures: what web Duo Chat asks each time it opens a thread (prints them; never passes or fails on time).
 *
 *   node -r @swc-node/register bench/messages.ts [seconds=5] [runs=3]
 *
 * Runs the service (API role, as `npm start -- --role=api`) in a process of its own on PostgreSQL and
 * Redis, stores threads of 50 turns (a question, then an answer of about 4 KB of Markdown with code,
 * a list and a table; each answer with its HTML, as the service stores one), and sends web Duo Chat's
 * own `getAiMessagesWithThread` document (its fixture in test/conformance/graphql/gitlab-web: every
 * message with its contentHtml):
 *  - once for each of `runs` threads never read before, one at a time, after three such reads to warm
 *    the code and before any load; and the same for threads stored without their answers' HTML (rows
 *    from before it was stored, or of another renderer version: every answer rendered when read);
 *  - from 8 concurrent clients (BENCH_MESSAGES_CLIENTS=<n>) for `seconds`, beside a trivial query, with
 *    the CPU per request of the service process.
 * Each figure is the median over `runs` runs; the loads follow one unmeasured round. Every wait has a time limit.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths';
import { MARKDOWN_VERSION, renderMarkdown } from '../src/chat/render-markdown';
import { groupWithSeat, userWithToken } from '../test/helpers/fixtures';
import { closedLoop, cpuMs, loadColumns, machineLoad, median, percentile, QUICK, reportFigures, runBench, within } from './lib/figures';
import { startBenchApi } from './lib/service-process';

const SECONDS = Number(process.argv[2] ?? (QUICK ? 2 : 5));
const RUNS = Number(process.argv[3] ?? 3);
const CONCURRENCY = Number(process.env.BENCH_MESSAGES_CLIENTS ?? 8);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1 || CONCURRENCY > 256)
  throw new Error('BENCH_MESSAGES_CLIENTS: a whole number from 1 to 256');
const TURNS = 50;
const REQUEST_LIMIT_MS = 30_000;
const THREAD_DOCUMENT = (
  JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'test/conformance/graphql/gitlab-web/getAiMessagesWithThread.json'), 'utf8')) as {
    document: string;
  }
).document;

/** An answer as a model writes one: prose, a code block, a list, a table (about 4 KB). */
const answer = (turn: number) =>
  [1, 2, 3]
    .map(
      (part) => `### Step ${part} of answer ${turn}

Parse the input with the platform's \`URL\` class and handle failures explicitly:

\`\`\`typescript
export function parse${part}(input: string, base?: string): URL | null {
  try {
    return new URL(input, base);
  } catch {
    return null;
  }
}
\`\`\`

- **Validation**: \`new URL\` throws on invalid input (turn ${turn}).
- **Relative URLs** need a base: \`new URL(path, base)\`.
- See [MDN](https://developer.mozilla.org/en-US/docs/Web/API/URL) for details.

| part | property |
| --- | --- |
| host | \`url.host\` |
| path | \`url.pathname\` |
`,
    )
    .join('\n');

async function main(): Promise<void> {
  const service = await startBenchApi('messages', { RATE_LIMIT_PER_MINUTE: '10000000' });
  try {
    const prisma = service.prisma;
    const user = await userWithToken(prisma);
    await groupWithSeat(prisma, { plan: 'premium', addOn: 'duo_pro', username: user.username });
    /**
     * A thread of TURNS questions and answers; each thread's answers differ, so none is rendered from a cache.
     * Answers are stored with their HTML as saveAssistantMessage stores them, unless `withHtml` is false.
     */
    const newThread = async (withHtml = true): Promise<string> => {
      const thread = await prisma.aiConversationThread.create({ data: { userId: user.id, conversationType: 'duo_chat', title: 'URLs' } });
      const started = Date.now() - TURNS * 2_000;
      const salt = randomBytes(4).toString('hex');
      await prisma.aiMessage.createMany({
        data: Array.from({ length: TURNS }, (_, turn) => {
          const requestId = randomUUID();
          return [
            { role: 'user', content: `How do I parse a URL? (${salt} ${turn})`, at: 0 },
            { role: 'assistant', content: answer(turn).replace('### Step 1', `### Step 1 (${salt})`), at: 1_000 },
          ].map((message) => ({
            id: randomUUID(),
            userId: user.id,
            threadId: thread.id,
            requestId,
            role: message.role as 'user' | 'assistant',
            content: message.content,
            ...(withHtml && message.role === 'assistant'
              ? { contentHtml: renderMarkdown(message.content), cachedMarkdownVersion: MARKDOWN_VERSION }
              : {}),
            createdAt: new Date(started + turn * 2_000 + message.at),
          }));
        }).flat(),
      });
      return `gid://gitlab/Ai::Conversation::Thread/${thread.id}`;
    };
    const url = service.url;
    const post = async (query: string, variables: Record<string, unknown>, check: (data: unknown) => boolean) => {
      const started = performance.now();
      const response = await within(
        fetch(`${url}/api/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
          body: JSON.stringify({ query, variables }),
        }).then((reply) => reply.json() as Promise<{ data?: unknown; errors?: unknown }>),
        REQUEST_LIMIT_MS,
        'a request got no answer',
      );
      if (response.errors || !check(response.data)) throw new Error(`unexpected answer: ${JSON.stringify(response).slice(0, 300)}`);
      return performance.now() - started;
    };
    type Nodes = { aiMessages: { nodes: Array<{ contentHtml: string | null }> } };
    const readThread = (threadId: string) =>
      post(THREAD_DOCUMENT, { threadId }, (data) => {
        const nodes = (data as Nodes).aiMessages.nodes;
        return nodes.length === TURNS * 2 && nodes.every((node) => node.contentHtml);
      });
    const trivial = () => post('{ currentUser { id } }', {}, (data) => Boolean((data as { currentUser: unknown }).currentUser));

    type Load = { p50: number; p99: number; perSecond: number; cpu: number };
    const load = async (request: () => Promise<number>): Promise<Load> => {
      const before = cpuMs(service.pid);
      const latencies = await closedLoop(CONCURRENCY, SECONDS, request);
      return {
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        perSecond: latencies.length / SECONDS,
        cpu: (cpuMs(service.pid) - before) / latencies.length,
      };
    };

    // Warm code first (a few reads of threads never read before), then the first reads, each alone,
    // before any load: a load's garbage would otherwise land in them.
    for (let index = 0; index < 3; index += 1) await readThread(await newThread(index % 2 === 0));
    const firsts: number[] = [];
    const firstsRendered: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      for (const [withHtml, into] of [
        [true, firsts],
        [false, firstsRendered],
      ] as const) {
        const thread = await newThread(withHtml);
        await new Promise((resolve) => setTimeout(resolve, 500));
        into.push(await readThread(thread));
      }
    }
    const warmThread = await newThread();
    await readThread(warmThread);
    await load(trivial);
    await load(() => readThread(warmThread));
    const trivialLoads: Load[] = [];
    const threadLoads: Load[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      trivialLoads.push(await load(trivial));
      threadLoads.push(await load(() => readThread(warmThread)));
    }
    const row = (label: string, loads: Load[]) =>
      `  ${label.padEnd(30)} ${loadColumns(loads)}   service CPU per request ${median(loads.map((l) => l.cpu)).toFixed(2)} ms`;
    console.log(
      `duo-slice chat history bench: threads of ${TURNS} turns, ${CONCURRENCY} concurrent clients, ${SECONDS} s per load, median of ` +
        `${RUNS} runs, node ${process.version}; ${machineLoad()}`,
    );
    const list = (values: number[]) => values.map((ms) => `${ms.toFixed(1)} ms`).join(', ');
    console.log(`  a thread never read before, alone: ${list(firsts)}`);
    console.log(`  the same, its answers stored without their HTML (rendered when read): ${list(firstsRendered)}`);
    console.log(row('trivial query', trivialLoads));
    console.log(row('getAiMessagesWithThread', threadLoads));
    const threadP50 = median(threadLoads.map((l) => l.p50));
    const threadCpu = median(threadLoads.map((l) => l.cpu));
    reportFigures([
      {
        figure: `web Duo Chat opening a ${TURNS}-turn thread (getAiMessagesWithThread): first read alone / p50 at ${CONCURRENCY} clients`,
        target: 'none',
        result:
          `${median(firsts).toFixed(1)} / ${threadP50.toFixed(1)} ms (service CPU ${threadCpu.toFixed(1)} ms; ` +
          `first read with the answers rendered when read: ${median(firstsRendered).toFixed(1)} ms)`,
        met: null,
      },
    ]);
  } finally {
    await service.close();
  }
}

runBench(main);
