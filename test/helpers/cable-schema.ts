import { EventEmitter, on } from 'node:events';
import { GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { forbidden } from '../../src/errors';

/** The context the cable tests give each operation: who is connected. */
export type CableTestContext = { user: string };

/** A test-only schema: `Query.hello`, `Query.boom` (an unexpected error), and `Subscription.tick(userId)` fed by `ticks`. */
export type CableTestSchema = {
  schema: GraphQLSchema;
  /** Publish with `ticks.emit(tickTopic(userId), n)`. */
  ticks: EventEmitter;
  /** User ids whose tick generator has run its `finally`, in order. */
  finished: string[];
};

export const tickTopic = (userId: string) => `tick:${userId}`;

export function createCableTestSchema(): CableTestSchema {
  const ticks = new EventEmitter();
  const finished: string[] = [];

  async function* tickEvents(userId: string): AsyncGenerator<number> {
    try {
      for await (const [n] of on(ticks, tickTopic(userId))) yield n as number;
    } finally {
      finished.push(userId);
    }
  }

  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        hello: { type: GraphQLString, resolve: (_root, _args, context: CableTestContext) => `hello ${context.user}` },
        boom: {
          type: GraphQLString,
          resolve: () => {
            throw new Error('connection to db-internal.example refused');
          },
        },
      },
    }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        tick: {
          type: GraphQLInt,
          args: { userId: { type: new GraphQLNonNull(GraphQLString) } },
          // As GitLab's aiCompletionResponse: only the connected user's own events.
          subscribe: (_root, args: { userId: string }, context: CableTestContext) => {
            if (args.userId !== context.user) throw forbidden('You cannot subscribe to another user');
            return tickEvents(args.userId);
          },
          resolve: (n: number) => n,
        },
      },
    }),
  });
  return { schema, ticks, finished };
}

/** Fake token table: `Bearer good` is alice, `Bearer bobs` is bob, anything else a bad token. */
export const CABLE_TOKENS: Record<string, string> = { good: 'alice', bobs: 'bob' };

export const TICK_SUBSCRIPTION = `subscription tick($userId: String!) {
  tick(userId: $userId)
}`;
