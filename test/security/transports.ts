import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { openRawCable, type RawCable } from '../helpers/cable-clients';

/** One GraphQL result, whichever transport carried it. */
export type TransportResult = {
  /** HTTP status (POST only). */
  status?: number;
  data?: unknown;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
};

export type Operation = {
  query: string;
  variables?: Record<string, unknown>;
  /** Variables as JSON text, for values JSON.stringify cannot write (5,000 levels deep). */
  rawVariables?: string;
  token?: string | null;
};

const variablesJson = (operation: Operation) => operation.rawVariables ?? JSON.stringify(operation.variables ?? {});

/** `{"a":{"a":...}}` nested `levels` deep around `inner`, as text. */
export const deepJson = (levels: number, inner = '{}') => `${'{"a":'.repeat(levels)}${inner}${'}'.repeat(levels)}`;

/** POST /api/graphql. */
export async function overHttp(url: string, operation: Operation): Promise<TransportResult> {
  const response = await fetch(`${url}/api/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(operation.token ? { authorization: `Bearer ${operation.token}` } : {}) },
    body: `{"query":${JSON.stringify(operation.query)},"variables":${variablesJson(operation)}}`,
  });
  return { status: response.status, ...((await response.json()) as object) };
}

/** graphql-ws on /api/graphql: the first result (or the errors) of one operation, on its own connection. */
export async function overGraphqlWs(url: string, operation: Operation): Promise<TransportResult> {
  if (operation.rawVariables !== undefined) return overRawGraphqlWs(url, operation);
  const client = createClient({
    url: `${url.replace(/^http/, 'ws')}/api/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: operation.token ? { Authorization: `Bearer ${operation.token}` } : {},
    retryAttempts: 0,
  });
  try {
    return await new Promise<TransportResult>((resolve, reject) => {
      client.subscribe(
        { query: operation.query, variables: operation.variables },
        {
          next: (result) => resolve(result as TransportResult),
          error: (error) =>
            Array.isArray(error)
              ? resolve({ errors: error as TransportResult['errors'] })
              : reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
          complete: () => resolve({}),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}

/** ActionCable's GraphqlChannel, as the language server subscribes: the first message's result. */
export async function overCable(url: string, operation: Operation & { cable?: RawCable }): Promise<TransportResult> {
  const cable = operation.cable ?? (await openCable(url, operation.token ?? undefined));
  try {
    const identifier = JSON.stringify({
      channel: 'GraphqlChannel',
      query: operation.query,
      variables: variablesJson(operation),
      operationName: null,
      nonce: Math.random(),
    });
    cable.send({ command: 'subscribe', identifier });
    for (;;) {
      const frame = await cable.take({ timeoutMs: 5000 });
      if (frame.identifier === identifier && frame.message) return (frame.message as { result: TransportResult }).result;
      if (frame.type === 'disconnect') return { errors: [{ message: 'disconnected', extensions: { code: String(frame.reason) } }] };
    }
  } finally {
    if (!operation.cable) await cable.close();
  }
}

/** A cable past its welcome frame. */
export async function openCable(url: string, token?: string): Promise<RawCable> {
  const cable = await openRawCable(`${url.replace(/^http/, 'ws')}/-/cable`, { token });
  const welcome = await cable.take();
  if (welcome.type !== 'welcome') throw new Error(`no welcome: ${JSON.stringify(welcome)}`);
  return cable;
}

/** The graphql-transport-ws protocol by hand: the client library cannot send what JSON.stringify cannot write. */
async function overRawGraphqlWs(url: string, operation: Operation): Promise<TransportResult> {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/api/graphql`, 'graphql-transport-ws');
  try {
    return await new Promise<TransportResult>((resolve, reject) => {
      socket.once('error', reject);
      socket.once('open', () =>
        socket.send(
          JSON.stringify({ type: 'connection_init', payload: operation.token ? { Authorization: `Bearer ${operation.token}` } : {} }),
        ),
      );
      socket.on('message', (data) => {
        const message = JSON.parse((data as Buffer).toString('utf8')) as { type: string; payload?: unknown };
        if (message.type === 'connection_ack') {
          socket.send(
            `{"id":"1","type":"subscribe","payload":{"query":${JSON.stringify(operation.query)},"variables":${variablesJson(operation)}}}`,
          );
        } else if (message.type === 'next') resolve(message.payload as TransportResult);
        else if (message.type === 'error') resolve({ errors: message.payload as TransportResult['errors'] });
      });
      socket.once('close', (code) => reject(new Error(`closed ${code}`)));
    });
  } finally {
    socket.close();
  }
}
