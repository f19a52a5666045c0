import type { ApolloServer } from '@apollo/server';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { parse, print, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { GitLabConfig } from '../config';
import { createGraphQLContext, type GraphQLContext } from '../graphql/context';
import { depthLimitMessage, depthMeter } from '../graphql/depth-limit';
import {
  findOperation,
  operationOwner,
  subOperation,
  TooManyRootFieldsError,
  variablesFor,
  type RootField,
} from '../graphql/operation-owner';
import type { Services } from '../services';
import { forwardedHeaders, passThroughTarget, passThroughToGitLab } from './gitlab-pass-through';
import { locals } from './locals';

/** Top-level GraphQL fields GitLab answers in connected mode although we have them: its version, not ours. */
const GITLAB_ANSWERS = new Set(['metadata']);

type GraphQLBody = { query: string; variables?: Record<string, unknown>; operationName?: string | null };
type GraphQLError = { message: string; path?: unknown[]; extensions?: Record<string, unknown> };
type GraphQLResult = { data?: Record<string, unknown> | null; errors?: GraphQLError[] };

const isGraphQLBody = (body: unknown): body is GraphQLBody =>
  Boolean(body) && typeof body === 'object' && !Array.isArray(body) && typeof (body as GraphQLBody).query === 'string';

function sendGraphQLErrors(response: Response, status: number, errors: GraphQLError[]): void {
  response.status(status).json({ errors });
}

/**
 * REST under /api/v4 that no route of ours answered: to GitLab, unchanged. Mounted last, after
 * authentication, the rate limit and the body limit.
 */
export function restPassThrough(services: Services, gitlab: GitLabConfig): RequestHandler {
  return (request, response) =>
    passThroughToGitLab({ gitlab, request, response, maxBodyBytes: services.config.maxBodyBytes, logger: services.logger });
}

/** GitLab's `version` and `metadata`: the IDE checks features against the real GitLab's version, so GitLab answers them. */
export function versionPassThrough(services: Services, gitlab: GitLabConfig): Router {
  const router = Router();
  router.get(['/version', '/metadata'], restPassThrough(services, gitlab));
  return router;
}

/**
 * GitLab's OAuth (Doorkeeper): its pages (`GET /oauth/authorize`, `/oauth/device`...) are GitLab's, so a
 * browser is sent there; its API (`POST /oauth/token`, `/oauth/revoke`, `GET /oauth/token/info`) is passed on
 * under our rate limit.
 */
export function oauthPassThrough(services: Services, gitlab: GitLabConfig, rateLimit: RequestHandler): Router {
  const router = Router();
  router.use((request, response, next) => {
    const isPage = (request.method === 'GET' || request.method === 'HEAD') && !/^\/oauth\/token\/info\/?(\?|$)/i.test(request.originalUrl);
    if (!isPage) return next();
    const target = passThroughTarget(request.originalUrl);
    if (!target)
      return void response.status(400).json({ error: 'invalid_request', error_description: 'The path is not one GitLab serves' });
    response.redirect(302, `${gitlab.url}${target}`);
  });
  router.use(rateLimit, restPassThrough(services, gitlab));
  return router;
}

export type GraphQLPassThroughOptions = {
  services: Services;
  gitlab: GitLabConfig;
  schema: GraphQLSchema;
  apollo: ApolloServer<GraphQLContext>;
};

/**
 * POST /api/graphql in connected mode, before Apollo: an operation whose top-level fields are all ours goes
 * on to Apollo; one with none of ours goes to GitLab unchanged; a query mixing both is split, each side
 * answers its fields, and the answers are merged in the operation's order. A mixed mutation is refused,
 * naming the fields: its parts could not run in the order the caller wrote them.
 */
export function graphqlPassThrough(options: GraphQLPassThroughOptions): RequestHandler {
  const { services, gitlab, schema } = options;
  const { config } = services;
  return async (request, response, next) => {
    if (request.method !== 'POST' || !isGraphQLBody(request.body)) return next();
    const body = request.body;
    let document: DocumentNode;
    try {
      document = parse(body.query, { maxTokens: config.graphqlMaxTokens });
    } catch {
      // Apollo answers a document that does not parse, with its usual error.
      return next();
    }
    let decision: ReturnType<typeof operationOwner>;
    try {
      decision = operationOwner({ schema, document, operationName: body.operationName, gitlabFields: GITLAB_ANSWERS });
    } catch (error) {
      if (!(error instanceof TooManyRootFieldsError)) throw error;
      return sendGraphQLErrors(response, 400, [
        {
          message: `This operation has ${error.count} top-level fields, too many to tell duo-slice's from GitLab's; send fewer at a time`,
          extensions: { code: 'BAD_USER_INPUT' },
        },
      ]);
    }
    if (decision.owner === 'ours') return next();
    // Our depth limit holds for what we pass on too (GitLab's complexity limit then applies as well).
    const operation = findOperation(document, body.operationName)!;
    const depth = depthMeter(document, config.graphqlMaxDepth)(operation.selectionSet);
    if (depth > config.graphqlMaxDepth) {
      return sendGraphQLErrors(response, 400, [
        { message: depthLimitMessage(depth, config.graphqlMaxDepth), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
      ]);
    }
    if (decision.owner === 'gitlab') {
      return passThroughToGitLab({ gitlab, request, response, maxBodyBytes: config.maxBodyBytes, logger: services.logger });
    }
    const ours = decision.fields.filter((field) => field.owner !== 'gitlab');
    const theirs = decision.fields.filter((field) => field.owner === 'gitlab');
    if (decision.operation.operation === 'mutation') {
      return sendGraphQLErrors(response, 400, [
        {
          message:
            `This mutation mixes fields duo-slice answers (${fieldNames(ours).join(', ')}) with fields GitLab answers ` +
            `(${fieldNames(theirs).join(', ')}); send them as separate mutations`,
          extensions: { code: 'BAD_USER_INPUT', duoSliceFields: fieldNames(ours), gitlabFields: fieldNames(theirs) },
        },
      ]);
    }
    const [ourResult, gitlabResult] = await Promise.all([
      executeOurs({
        ...options,
        request,
        response,
        document: subOperation(
          document,
          decision.operation,
          ours.map((field) => field.node),
        ),
      }),
      askGitLab({
        gitlab,
        request,
        document: subOperation(
          document,
          decision.operation,
          theirs.map((field) => field.node),
        ),
        variables: body.variables,
        operationName: body.operationName,
      }),
    ]);
    response.status(200).json(mergeResults(decision.fields, ourResult, gitlabResult));
  };
}

const fieldNames = (fields: RootField[]): string[] => [...new Set(fields.map((field) => field.node.name.value))];

async function executeOurs(
  options: GraphQLPassThroughOptions & { request: Request; response: Response; document: DocumentNode },
): Promise<GraphQLResult> {
  const { services, apollo, request, response, document } = options;
  const body = request.body as GraphQLBody;
  const { viewer, requestId, receivedAt } = locals(response);
  const result = await apollo.executeOperation(
    { query: print(document), variables: variablesFor(document, body.variables), operationName: body.operationName ?? undefined },
    { contextValue: createGraphQLContext(services, viewer, requestId, receivedAt) },
  );
  if (result.body.kind !== 'single') return { data: null, errors: [{ message: 'Incremental delivery is not supported here' }] };
  return result.body.singleResult as GraphQLResult;
}

/** GitLab's answer to its part of a mixed query, with the caller's own headers; GitLab not answering is an error of that part. */
async function askGitLab(options: {
  gitlab: GitLabConfig;
  request: Request;
  document: DocumentNode;
  variables: Record<string, unknown> | undefined;
  operationName: string | null | undefined;
}): Promise<GraphQLResult | { unavailable: string }> {
  const { gitlab, request, document } = options;
  const headers = forwardedHeaders(request.headers);
  for (const name of ['content-length', 'content-encoding', 'accept-encoding', 'cookie2']) delete headers[name];
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  flat['content-type'] = 'application/json';
  try {
    const answer = await fetch(`${gitlab.url}/api/graphql`, {
      method: 'POST',
      headers: flat,
      body: JSON.stringify({
        query: print(document),
        variables: variablesFor(document, options.variables),
        ...(options.operationName ? { operationName: options.operationName } : {}),
      }),
      redirect: 'manual',
      signal: AbortSignal.timeout(gitlab.timeoutMs),
    });
    const parsed = (await answer.json().catch(() => null)) as GraphQLResult | null;
    if (!parsed || typeof parsed !== 'object' || answer.status >= 500) return { unavailable: `GitLab at ${gitlab.url} is unavailable` };
    return parsed;
  } catch {
    return { unavailable: `GitLab at ${gitlab.url} is unavailable` };
  }
}

/** One answer in the operation's field order: each top-level field from the side that answered it, errors of both. */
export function mergeResults(fields: RootField[], ours: GraphQLResult, gitlab: GraphQLResult | { unavailable: string }): GraphQLResult {
  const errors: GraphQLError[] = [...(ours.errors ?? [])];
  const gitlabData = 'unavailable' in gitlab ? null : (gitlab.data ?? null);
  if ('unavailable' in gitlab) {
    for (const field of fields.filter((candidate) => candidate.owner === 'gitlab')) {
      errors.push({ message: gitlab.unavailable, path: [field.responseKey], extensions: { code: 'SERVICE_UNAVAILABLE' } });
    }
  } else {
    errors.push(...(gitlab.errors ?? []));
  }
  const data: Record<string, unknown> = {};
  for (const field of fields) {
    const source = field.owner === 'gitlab' ? gitlabData : (ours.data ?? null);
    data[field.responseKey] = source?.[field.responseKey] ?? null;
  }
  return errors.length > 0 ? { data, errors } : { data };
}
