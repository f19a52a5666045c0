import type * as Anycable from '@anycable/core';
import { WebSocket } from 'ws';
import { waitUntil } from './wait';

export type CableFrame = Record<string, unknown>;

/** @anycable/core is ESM only: import() it (jest.config.js keeps import() for Jest's ESM loader). */
export function loadAnycable(): Promise<typeof Anycable> {
  return import('@anycable/core');
}

/** The handshake headers GitLab's language server sends (api.ts#connectToCable), minus its version headers. */
export function cableHeaders(token?: string): Record<string, string> {
  return { ...(token ? { Authorization: `Bearer ${token}` } : {}), 'User-Agent': 'duo-slice-tests' };
}

/** A cable as GitLab's language server opens it: createCable with ws, its headers, JSON protocol. */
export async function createLspCable(url: string, token?: string): Promise<Anycable.Cable> {
  const { createCable } = await loadAnycable();
  return createCable(url, {
    websocketImplementation: WebSocket,
    websocketOptions: { headers: cableHeaders(token) },
    // No reconnects (and their timers) in tests; fast subscribe retries so no timer outlives a test by long.
    monitor: false,
    logLevel: 'error',
    protocolOptions: { subscribeRetryInterval: 200, subscribeCooldownInterval: 50 },
  });
}

/** A frame-level client: every frame it receives, in order, to take one by one. */
export type RawCable = {
  socket: WebSocket;
  /** Every frame received so far, pings included. */
  frames: CableFrame[];
  /** The next frame not yet taken (pings skipped unless asked for); rejects after timeoutMs. */
  take(options?: { pings?: boolean; timeoutMs?: number }): Promise<CableFrame>;
  send(frame: unknown): void;
  /** Resolves with the close code once the socket is closed (by either side). */
  closed: Promise<number>;
  close(): Promise<void>;
};

export type OpenRawCableOptions = { token?: string; protocols?: string[] };

export function openRawCable(url: string, options: OpenRawCableOptions = {}): Promise<RawCable> {
  const socket = new WebSocket(url, options.protocols ?? ['actioncable-v1-json'], { headers: cableHeaders(options.token) });
  const frames: CableFrame[] = [];
  const waiters: Array<() => void> = [];
  let taken = 0;
  socket.on('message', (data) => {
    frames.push(JSON.parse((data as Buffer).toString('utf8')) as CableFrame);
    waiters.splice(0).forEach((wake) => wake());
  });
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));

  const take: RawCable['take'] = async ({ pings = false, timeoutMs = 2000 } = {}) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (taken < frames.length) {
        const frame = frames[taken++];
        if (pings || frame.type !== 'ping') return frame;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`No frame within ${timeoutMs} ms; received: ${JSON.stringify(frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };

  return new Promise((resolve, reject) => {
    // A refused upgrade arrives here too, as "Unexpected server response: <status>".
    socket.once('error', reject);
    socket.once('open', () =>
      resolve({
        socket,
        frames,
        take,
        send: (frame) => socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
        closed,
        close: async () => {
          if (socket.readyState !== WebSocket.CLOSED) socket.close();
          await closed;
        },
      }),
    );
  });
}

/** Polls until check() is true; for effects on the server side that send no frame. */
export async function waitFor(check: () => boolean, timeoutMs = 2000): Promise<void> {
  await waitUntil(check, { timeoutMs, intervalMs: 5, what: check.toString() });
}

/** The identifier params GitLab's language server sends: `variables` is a JSON string, not an object. */
export type LspGraphqlRequest = { query: string; variables: Record<string, unknown>; operationName: string };

/** Subscribes as the language server's channels do (ai_completion_response_channel.ts); collects every message. */
export async function subscribeLikeLsp(
  cable: Anycable.Cable,
  request: LspGraphqlRequest,
): Promise<{ channel: Anycable.Channel; messages: unknown[] }> {
  const { Channel } = await loadAnycable();
  type Params = { channel: 'GraphqlChannel'; query: string; variables: string; operationName: string };
  class GraphqlChannel extends Channel<Params> {
    static readonly identifier = 'GraphqlChannel';
  }
  const channel = new GraphqlChannel({
    channel: 'GraphqlChannel',
    query: request.query,
    variables: JSON.stringify(request.variables),
    operationName: request.operationName,
  });
  const messages: unknown[] = [];
  channel.on('message', (message) => messages.push(message));
  cable.subscribe(channel);
  await channel.ensureSubscribed();
  return { channel, messages };
}
