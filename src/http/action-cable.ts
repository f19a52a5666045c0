import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type GraphQLSchema, type ValidationRule } from 'graphql';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { isAppError } from '../errors';
import { refusedUnsent, unavailableMessage } from '../unavailable';
import type { Logger } from '../logger';
import { observeSocketServer, withSubscriptionCount } from '../metrics/record';
import {
  startGraphqlChannel,
  type CheckedOperation,
  type FormatGraphqlError,
  type GraphqlChannelRun,
} from './action-cable-graphql-channel';

export type { FormatGraphqlError } from './action-cable-graphql-channel';

/** The only subprotocol spoken: Rails ActionCable's JSON protocol (the anycable client's default). */
export const ACTION_CABLE_PROTOCOL = 'actioncable-v1-json';
const GRAPHQL_CHANNEL = 'GraphqlChannel';
const TOO_MANY_SUBSCRIPTIONS = 'Too many open subscriptions: close some before opening more';
const MAX_FRAME_BYTES = 1024 * 1024;
// How long close() lets a client finish the closing handshake before cutting it off.
const CLOSE_GRACE_MS = 1000;
/** Authentication could not reach the database or Redis in time. */
const UNAVAILABLE = Symbol('unavailable');

export type ActionCableServerOptions<User> = {
  schema: GraphQLSchema;
  /**
   * Who the connection belongs to, from the upgrade request (`Authorization: Bearer <token>`).
   * Null rejects the connection (GitLab rejects unauthenticated cable connections); throwing does the same.
   */
  authenticate(request: IncomingMessage): Promise<User | null>;
  /** The GraphQL contextValue for one GraphqlChannel subscription of an authenticated connection. */
  createContext(user: User, request: IncomingMessage): unknown;
  logger: Logger;
  /** How the schema's errors are shaped for clients (Apollo's signature). Default: graphql-js's own format. */
  formatError?: FormatGraphqlError;
  /** Added to graphql-js's specified validation rules. Default: none. */
  validationRules?: readonly ValidationRule[];
  /** Default 3000, as Rails. */
  pingIntervalMs?: number;
  /** Largest frame a client may send. Default 1 MiB. */
  maxMessageBytes?: number;
  /** graphql-js parse option: documents over this many tokens are refused before validation. Default: no limit. */
  maxTokens?: number;
  /** Checks run on every subscribe command. Default: none (the connection's user is trusted for its lifetime). */
  guard?: CableGuard<User>;
};

/** What every GraphqlChannel subscription of a connection goes through (see socket-guard.ts). */
export type CableGuard<User> = {
  /** How often an idle connection re-checks its user. */
  reauthIntervalMs: number;
  /** The user now, or null when the connection's credentials stopped being valid: the connection is then closed. */
  reauthenticate(user: User, request: IncomingMessage): Promise<User | null>;
  /** Null to go on; an error to answer the subscription with (e.g. the rate limit). */
  admit(user: User, request: IncomingMessage): Promise<GraphQLError | null>;
  /** A slot held while the subscription runs; null when the user holds too many. */
  acquireSlot(user: User, request: IncomingMessage): string | null;
  releaseSlot(slot: string): void;
  /** Throws a GraphQLError to refuse a parsed, validated operation (scopes, variables, cost). */
  checkOperation(user: User, operation: CheckedOperation): void;
};

export type ActionCableServer = {
  /** Call from the HTTP server's 'upgrade' event for requests to /-/cable. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Tells every client to reconnect later, closes every connection and stops every subscription. */
  close(): Promise<void>;
};

type Command = { command: string; identifier: string; data?: unknown };

/** ActionCable at `/-/cable` with GitLab's GraphqlChannel, the transport GitLab's language server streams Duo Chat over. */
export function createActionCableServer<User>(options: ActionCableServerOptions<User>): ActionCableServer {
  const pingIntervalMs = options.pingIntervalMs ?? 3000;
  const sockets = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxMessageBytes ?? MAX_FRAME_BYTES,
    handleProtocols: (protocols) => (protocols.has(ACTION_CABLE_PROTOCOL) ? ACTION_CABLE_PROTOCOL : false),
  });
  observeSocketServer('action_cable', sockets);
  let closing = false;

  const connect = (socket: WebSocket, request: IncomingMessage) => {
    const logger = options.logger.child({ connectionId: randomUUID() });
    const subscriptions = new Map<string, GraphqlChannelRun>();
    let ping: NodeJS.Timeout | undefined;
    let recheck: NodeJS.Timeout | undefined;
    let queue: Promise<unknown> = Promise.resolve();
    // Subscription slots held, by identifier: given back once, whichever comes first (end, unsubscribe, close).
    const slots = new Map<string, string>();
    const releaseSlot = (identifier: string) => {
      const slot = slots.get(identifier);
      if (slot === undefined) return;
      slots.delete(identifier);
      options.guard?.releaseSlot(slot);
    };
    const send = (frame: Record<string, unknown>) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
    };

    const authenticated = authenticate().then((user) => {
      if (socket.readyState !== WebSocket.OPEN) return null;
      if (user === UNAVAILABLE) {
        // As Rails on an error while connecting: no "unauthorized", so the client comes back (its reconnect backs off).
        socket.close(1011);
        return null;
      }
      if (user === null) {
        send({ type: 'disconnect', reason: 'unauthorized', reconnect: false });
        socket.close(1000);
        return null;
      }
      logger.info({ event: 'cable_connected', remoteAddress: request.socket.remoteAddress }, 'ActionCable connection opened');
      send({ type: 'welcome' });
      ping = setInterval(() => send({ type: 'ping', message: Math.floor(Date.now() / 1000) }), pingIntervalMs);
      ping.unref();
      const connection = { user };
      if (options.guard) {
        recheck = setInterval(() => void stillValid(connection).catch(() => undefined), options.guard.reauthIntervalMs);
        recheck.unref();
      }
      return connection;
    });

    // As GitLab on a revoked token: the server disconnects, and the client must not come back with it.
    const stillValid = async (connection: { user: User }): Promise<boolean> => {
      if (!options.guard) return true;
      if (socket.readyState !== WebSocket.OPEN) return false;
      const user = await options.guard.reauthenticate(connection.user, request);
      if (user !== null) {
        connection.user = user;
        return true;
      }
      logger.info({ event: 'socket_token_invalid', transport: 'action-cable' }, 'closing a connection whose token is no longer valid');
      send({ type: 'disconnect', reason: 'unauthorized', reconnect: false });
      socket.close(1000);
      return false;
    };

    const refuse = (identifier: string, error: GraphQLError) => {
      send({ identifier, type: 'confirm_subscription' });
      send({
        identifier,
        message: { result: { errors: [options.formatError ? options.formatError(error.toJSON(), error) : error.toJSON()] }, more: false },
      });
    };

    const subscribe = async (connection: { user: User }, identifier: string) => {
      if (subscriptions.has(identifier)) {
        logger.debug({ event: 'cable_subscribe_ignored', reason: 'already_subscribed' }, 'Already subscribed');
        return;
      }
      const params = parseJson(identifier);
      if (!params) return logger.debug({ event: 'cable_frame_ignored', reason: 'malformed_identifier' }, 'Malformed identifier ignored');
      if (params.channel !== GRAPHQL_CHANNEL) {
        logger.info({ event: 'cable_subscription_rejected', channel: params.channel }, 'Unknown channel');
        send({ identifier, type: 'reject_subscription' });
        return;
      }
      const guard = options.guard;
      let slot: string | null = null;
      if (guard) {
        let valid: boolean;
        try {
          valid = await stillValid(connection);
        } catch (error) {
          // The token could not be re-checked (GitLab, the database or Redis did not answer): this subscription is refused,
          // the connection stays.
          const unavailable = unavailableMessage(error);
          if (!unavailable) throw error;
          if (!refusedUnsent(error))
            logger.warn({ event: 'socket_reauth_unavailable', transport: 'action-cable', err: error }, unavailable);
          return refuse(identifier, new GraphQLError(unavailable, { extensions: { code: 'SERVICE_UNAVAILABLE' } }));
        }
        if (!valid) return;
        const refused = await guard.admit(connection.user, request);
        if (refused) return refuse(identifier, refused);
        slot = guard.acquireSlot(connection.user, request);
        if (slot === null) return refuse(identifier, new GraphQLError(TOO_MANY_SUBSCRIPTIONS, { extensions: { code: 'RATE_LIMITED' } }));
      }
      if (socket.readyState !== WebSocket.OPEN || subscriptions.has(identifier)) {
        if (slot !== null) guard!.releaseSlot(slot);
        return;
      }
      const user = connection.user;
      logger.info({ event: 'cable_subscribed', channel: GRAPHQL_CHANNEL, operationName: params.operationName }, 'Subscribed');
      // Confirmed just before the channel's first message: for a subscription, once its events' source listens (Redis
      // acknowledged the SUBSCRIBE), as Rails defers the confirmation of a stream_from. Clients send their aiAction on
      // the confirmation (the language server's ensureSubscribed): an answer published before would be lost.
      let confirmed = false;
      const run = startGraphqlChannel({
        schema: options.schema,
        params,
        createContext: () => options.createContext(user, request),
        transmit: (message) => {
          if (!confirmed) send({ identifier, type: 'confirm_subscription' });
          confirmed = true;
          send({ identifier, message });
        },
        logger,
        formatError: options.formatError,
        validationRules: options.validationRules,
        maxTokens: options.maxTokens,
        checkOperation: guard ? (operation) => guard.checkOperation(user, operation) : undefined,
        // An event goes out only while the token holds (a database that does not answer does not stop it).
        admitEvent: guard ? () => stillValid(connection).catch(() => true) : undefined,
      });
      subscriptions.set(identifier, withSubscriptionCount('action_cable', run));
      if (slot !== null) {
        slots.set(identifier, slot);
        void run.done.then(() => releaseSlot(identifier));
      }
    };

    const unsubscribe = (identifier: string) => {
      const run = subscriptions.get(identifier);
      if (!run) return logger.debug({ event: 'cable_frame_ignored', reason: 'not_subscribed' }, 'Unsubscribe without subscription');
      run.stop();
      subscriptions.delete(identifier);
      releaseSlot(identifier);
      logger.info({ event: 'cable_unsubscribed' }, 'Unsubscribed');
    };

    const dispatch = async (connection: { user: User }, command: Command) => {
      if (command.command === 'subscribe') return subscribe(connection, command.identifier);
      if (command.command === 'unsubscribe') return unsubscribe(command.identifier);
      // GraphqlChannel has no actions a client may perform (the `message` command), like GitLab's.
      logger.debug({ event: 'cable_frame_ignored', reason: 'unsupported_command', command: command.command }, 'Command ignored');
    };

    // Listening before authentication ends: a frame sent early must wait, not vanish.
    socket.on('message', (data: RawData, isBinary: boolean) => {
      const command = isBinary
        ? null
        : parseCommand(
            Buffer.isBuffer(data)
              ? data.toString('utf8')
              : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString('utf8'),
          );
      if (!command) return logger.debug({ event: 'cable_frame_ignored', reason: 'malformed' }, 'Malformed frame ignored');
      // One frame at a time, in order: a subscribe's checks must not let a later unsubscribe overtake it.
      queue = queue
        .then(() => authenticated)
        .then((connection) => (connection && socket.readyState === WebSocket.OPEN ? dispatch(connection, command) : undefined))
        .catch((error: unknown) => logger.error({ event: 'cable_command_failed', err: error }, 'ActionCable command failed'));
    });
    socket.on('error', (error) => logger.debug({ event: 'cable_socket_error', err: error }, 'ActionCable socket error'));
    socket.on('close', (code) => {
      clearInterval(ping);
      clearInterval(recheck);
      for (const run of subscriptions.values()) run.stop();
      for (const identifier of [...slots.keys()]) releaseSlot(identifier);
      logger.info({ event: 'cable_disconnected', code, subscriptions: subscriptions.size }, 'ActionCable connection closed');
      subscriptions.clear();
    });

    async function authenticate(): Promise<User | null | typeof UNAVAILABLE> {
      try {
        const user = await options.authenticate(request);
        if (user === null) logger.info({ event: 'cable_rejected', reason: 'unauthenticated' }, 'ActionCable connection rejected');
        return user;
      } catch (error) {
        const unavailable = unavailableMessage(error);
        if (unavailable) {
          if (!refusedUnsent(error)) logger.warn({ event: 'cable_connect_unavailable', err: error }, unavailable);
          return UNAVAILABLE;
        }
        if (isAppError(error)) logger.info({ event: 'cable_rejected', reason: error.code }, 'ActionCable connection rejected');
        else logger.error({ event: 'cable_authentication_failed', err: error }, 'ActionCable authentication failed');
        return null;
      }
    }
  };

  return {
    handleUpgrade(request, socket, head) {
      if (closing) return refuseUpgrade(socket, 503, 'Service Unavailable', 'The server is shutting down.');
      const offered = offeredProtocols(request);
      // Rails would accept and leave the client to drop the connection; a clear HTTP answer is kinder.
      if (offered.length > 0 && !offered.includes(ACTION_CABLE_PROTOCOL)) {
        options.logger.info({ event: 'cable_rejected', reason: 'unsupported_protocol', protocols: offered }, 'ActionCable upgrade refused');
        return refuseUpgrade(
          socket,
          400,
          'Bad Request',
          `Unsupported WebSocket subprotocol; this endpoint speaks ${ACTION_CABLE_PROTOCOL}.`,
        );
      }
      sockets.handleUpgrade(request, socket, head, (websocket) => connect(websocket, request));
    },

    async close() {
      closing = true;
      await Promise.all([...sockets.clients].map((socket) => closeForRestart(socket)));
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    },
  };
}

// As Rails on restart: the client may come back, to this server's successor.
function closeForRestart(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const cutOff = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS);
    socket.once('close', () => {
      clearTimeout(cutOff);
      resolve();
    });
    if (socket.readyState === WebSocket.OPEN)
      socket.send(JSON.stringify({ type: 'disconnect', reason: 'server_restart', reconnect: true }));
    socket.close(1001);
  });
}

function parseCommand(text: string): Command | null {
  const frame = parseJson(text);
  if (!frame || typeof frame.command !== 'string' || typeof frame.identifier !== 'string') return null;
  return { command: frame.command, identifier: frame.identifier, data: frame.data };
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function offeredProtocols(request: IncomingMessage): string[] {
  const header = request.headers['sec-websocket-protocol'];
  if (!header) return [];
  return header
    .split(',')
    .map((protocol) => protocol.trim())
    .filter(Boolean);
}

function refuseUpgrade(socket: Duplex, status: number, reason: string, message: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ` +
      `${Buffer.byteLength(message)}\r\n\r\n${message}`,
  );
}
