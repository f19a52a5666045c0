import type http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A stand-in provider whose answers a test scripts: what stub-llm-server and stub-reranker-server hand back. */
export type ScriptedServer<Behaviour, Recorded> = {
  /** http://127.0.0.1:<port>, no trailing slash. */
  url: string;
  /** Every routed request, in arrival order. */
  requests: Recorded[];
  /** Queues behaviours for the next requests, one each, after those already queued. */
  script(...behaviours: Behaviour[]): void;
  /** Forgets queued behaviours and recorded requests (e.g. in afterEach when sharing one stand-in). */
  reset(): void;
  /** Ends pending delays, closes every connection (hanging requests too) and stops the server. */
  close(): Promise<void>;
};

/** Starts `server` on a free loopback port and wraps the state its handler reads (the queue) and writes (requests, timers). */
export async function listenScripted<Behaviour, Recorded>(
  server: http.Server,
  state: { queue: Behaviour[]; requests: Recorded[]; timers: Set<NodeJS.Timeout> },
): Promise<ScriptedServer<Behaviour, Recorded>> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: state.requests,
    script: (...behaviours) => {
      state.queue.push(...behaviours);
    },
    reset: () => {
      state.queue.length = 0;
      state.requests.length = 0;
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of state.timers) clearTimeout(timer);
        state.timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
