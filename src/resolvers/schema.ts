import 'reflect-metadata';
import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { JSONResolver } from 'graphql-scalars';
import { buildSchemaSync } from 'type-graphql';
import { AiActionResolver } from './ai-action.resolver';
import { AiCompletionResponseResolver } from './ai-completion-response.resolver';
import { AiMessagesResolver } from './ai-messages.resolver';
import { CurrentUserResolver } from './current-user.resolver';
import { FeedbackResolver } from './feedback.resolver';
import { PromptCheckResolver } from './prompt-check.resolver';
import { CodeSuggestionIntentResolver } from './code-suggestion-intent.resolver';
import { CodebaseSearchResolver } from './codebase-search.resolver';
import { CodeIndexDirectoriesResolver, CodeIndexResolver } from './code-index.resolver';
import { CodeSuggestionSessionResolver } from './code-suggestion-session.resolver';
import { ProjectResolver } from './project.resolver';
import { MetadataResolver } from './metadata.resolver';
import { DuoChatPresetsResolver } from './duo-chat-presets.resolver';
import { ThreadResolver } from './thread.resolver';
import { AiAgentVersionID, AiConversationThreadID, AiModelID, NamespaceID, ProjectID, Time, UserID } from '../graphql/scalars';
import { GlIntroducedDirective } from '../graphql/gl-introduced';

export const RESOLVERS = [
  CurrentUserResolver,
  MetadataResolver,
  ProjectResolver,
  ThreadResolver,
  AiActionResolver,
  AiMessagesResolver,
  DuoChatPresetsResolver,
  AiCompletionResponseResolver,
  FeedbackResolver,
  PromptCheckResolver,
  CodeSuggestionIntentResolver,
  CodeSuggestionSessionResolver,
  CodeIndexResolver,
  CodeIndexDirectoriesResolver,
  CodebaseSearchResolver,
] as const;

let cached: GraphQLSchema | undefined;

// type-graphql insists on a PubSub, but our subscriptions bring its own `subscribe` (Redis-backed,
// see chat/chat-events.ts), so this one is never called.
const UNUSED_PUB_SUB = {
  publish: () => {
    throw new Error('type-graphql PubSub is not used: chat events go through ChatEventBus');
  },
  subscribe: () => {
    throw new Error('type-graphql PubSub is not used: chat events go through ChatEventBus');
  },
};

/** The schema, built once from the decorated resolvers (they hold no state: services come from the context). */
export function buildGraphQLSchema(): GraphQLSchema {
  if (cached) return cached;
  const built = buildSchemaSync({ resolvers: [...RESOLVERS], validate: false, emitSchemaFile: false, pubSub: UNUSED_PUB_SUB });
  // GitLab's id and value scalars are part of the contract even before a field uses them.
  const config = built.toConfig();
  const named = new Set(config.types.map((type) => type.name));
  const scalars = [UserID, ProjectID, NamespaceID, AiModelID, AiConversationThreadID, AiAgentVersionID, Time, JSONResolver].filter(
    (scalar) => !named.has(scalar.name),
  );
  // @gl_introduced, which clients send to every version: what it strips never reaches validation
  // (graphql/gl-introduced.ts), and on what it keeps it must validate and does nothing.
  cached = new GraphQLSchema({
    ...config,
    types: [...config.types, ...scalars],
    directives: [...config.directives, GlIntroducedDirective],
  });
  return cached;
}

/** The SDL committed as schema.graphql. */
export function printGraphQLSchema(schema: GraphQLSchema = buildGraphQLSchema()): string {
  return `${printSchema(lexicographicSortSchema(schema)).trim()}\n`;
}
