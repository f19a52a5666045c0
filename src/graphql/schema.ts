import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchemaSync } from 'type-graphql';
import { CurrentUserResolver } from '../resolvers/current-user.resolver';
import { ProjectResolver } from '../resolvers/project.resolver';
import { ThreadResolver } from '../resolvers/thread.resolver';

export const RESOLVERS = [CurrentUserResolver, ProjectResolver, ThreadResolver] as const;

let cached: GraphQLSchema | undefined;

/** The schema, built once from the decorated resolvers (they hold no state: services come from the context). */
export function buildGraphQLSchema(): GraphQLSchema {
  cached ??= buildSchemaSync({ resolvers: [...RESOLVERS], validate: false, emitSchemaFile: false });
  return cached;
}

/** The SDL committed as schema.graphql. */
export function printGraphQLSchema(schema: GraphQLSchema = buildGraphQLSchema()): string {
  return `${printSchema(lexicographicSortSchema(schema)).trim()}\n`;
}
