import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { requireSearchableQuery } from '../search/text-query';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Viewer } from '../auth/viewer';
import { isAppError, withoutServerPaths } from '../errors';
import { codeIndexStatus } from '../search/codebase.service';
import { directoryPathProblem, formatSemanticResultsText, SEMANTIC_SEARCH_LIMITS } from '../search/semantic-code-results';
import { semanticCodeSearch } from '../search/semantic-code-search';
import type { Services } from '../services';
import { refusedUnsent, unavailableMessage } from '../unavailable';

export type McpServerOptions = {
  services: Services;
  /** Authenticated by the route (a token with the api, read_api or mcp scope). */
  viewer: Viewer;
  /** The instance's public URL, for file links. */
  externalUrl: string;
  /** The version the instance reports (GitLab's get_mcp_server_version). */
  version: string;
  requestId: string;
};

/** GitLab's error result: `isError`, the message for the model, the detail in structuredContent. */
function toolError(message: string, detail?: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], structuredContent: detail ? { error: detail } : {}, isError: true };
}

// GitLab's schema says string; models also send a bare number.
const projectId = z.union([z.string().min(1).max(255), z.number().int().positive()]).describe('Either a project id or project path.');

const semanticQuery = z.string().min(1).max(SEMANTIC_SEARCH_LIMITS.queryChars);
const directoryPath = z.string().min(1).max(SEMANTIC_SEARCH_LIMITS.directoryChars).optional();
const knn = z
  .number()
  .int()
  .min(SEMANTIC_SEARCH_LIMITS.knn.min)
  .max(SEMANTIC_SEARCH_LIMITS.knn.max)
  .default(SEMANTIC_SEARCH_LIMITS.knn.default);
const limit = z
  .number()
  .int()
  .min(SEMANTIC_SEARCH_LIMITS.limit.min)
  .max(SEMANTIC_SEARCH_LIMITS.limit.max)
  .default(SEMANTIC_SEARCH_LIMITS.limit.default);
const refArgument = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .describe("Branch to search (an addition to GitLab's tool). Default: the project's default branch.");

/** What both code search tools take, under GitLab's names (the query's name differs between them). */
type CodeSearchArguments = {
  query: string;
  project_id: string | number;
  directory_path?: string;
  knn: number;
  limit: number;
  ref?: string;
};

/**
 * One MCP server per request (stateless Streamable HTTP), for one viewer. Tools are thin: they
 * call the same services as the REST and GraphQL edges, under the same authorization, and never
 * throw: failures come back as tool errors with words safe for the user.
 */
export function createMcpServer(options: McpServerOptions): McpServer {
  const { services, viewer } = options;
  const server = new McpServer({ name: 'GitLab MCP server (duo-slice)', version: options.version });

  const run = async (tool: string, body: () => Promise<CallToolResult>): Promise<CallToolResult> => {
    try {
      return await body();
    } catch (error) {
      if (isAppError(error) && error.code !== 'INTERNAL')
        return toolError(`Tool execution failed: ${error.userMessage}`, error.userMessage);
      const unavailable = unavailableMessage(error);
      if (unavailable) {
        if (!refusedUnsent(error))
          services.logger.warn({ event: 'mcp_tool_unavailable', tool, requestId: options.requestId, err: error }, unavailable);
        return toolError(`Tool execution failed: ${unavailable}`, unavailable);
      }
      services.logger.error({ event: 'mcp_tool_failed', tool, requestId: options.requestId, err: error }, 'MCP tool failed');
      return toolError('Tool execution failed: internal error');
    }
  };

  server.registerTool(
    'get_mcp_server_version',
    {
      title: 'Get MCP server version',
      description: 'Returns the current version of the GitLab MCP server.',
      annotations: { readOnlyHint: true },
    },
    async () => ({ content: [{ type: 'text', text: options.version }], structuredContent: { version: options.version } }),
  );

  /** GitLab's semantic code search, shared by semantic_search (scope "code") and its alias semantic_code_search. */
  const searchCode = (tool: string, args: CodeSearchArguments & { queryField: string }) =>
    run(tool, async () => {
      const problem = args.directory_path === undefined ? null : directoryPathProblem(args.directory_path);
      if (problem) return toolError(`Tool execution failed: ${problem}`, problem);
      // As REST and GraphQL refuse it, before anything (an index run) is started for it.
      requireSearchableQuery(args.query, args.queryField);
      try {
        const answer = await semanticCodeSearch({
          prisma: services.prisma,
          queues: services.queues,
          embedder: services.embedder,
          reranking: services.reranking,
          disabledCategories: services.config.disabledContextCategories,
          externalUrl: options.externalUrl,
          viewer,
          project: String(args.project_id),
          query: args.query,
          directory: args.directory_path ?? null,
          ref: args.ref ?? null,
          limit: args.limit,
          candidates: args.knn,
          dataDir: services.config.dataDir,
        });
        return {
          content: [{ type: 'text', text: formatSemanticResultsText(answer) }],
          structuredContent: {
            items: answer.results,
            metadata: {
              count: answer.results.length,
              has_more: false,
              confidence: answer.confidence,
              ref: answer.ref,
              commit_sha: answer.commit_sha,
            },
          },
        };
      } catch (error) {
        // GitLab's words while a project has no embeddings; ours add what is happening about it.
        if (isAppError(error) && error.code === 'CONFLICT') {
          const message = `Project '${args.project_id}' has no embeddings`;
          return toolError(`Tool execution failed: Unable to perform semantic search, ${message}. ${error.userMessage}`, message);
        }
        throw error;
      }
    });

  server.registerTool(
    'semantic_search',
    {
      title: 'Semantic search',
      description: [
        'Semantic (meaning-based) search over different types of content.',
        '',
        'Searches indexed project content using embedding-based similarity rather than keyword matching. Use it when you do not know ' +
          'the exact symbol or file name, or to discover how a behavior is implemented across the codebase.',
        'Give a concise, specific query with concrete keywords; use directory_path to narrow the scope when scope is "code".',
        '',
        'Results are grouped by file. Each file includes merged line ranges with content and a relevance score (0.0-1.0). The response ' +
          'includes an overall confidence level (high/medium/low/unknown) based on score distribution.',
        '- A project that is not indexed yet starts indexing and answers with an error: try again in a few minutes.',
      ].join('\n'),
      // Strict, as GitLab's: a misspelt argument is an error, not ignored.
      inputSchema: z.strictObject({
        scope: z.enum(['code']).describe("Specify the type of content to search for. Supported values: - 'code' - search code files."),
        q: semanticQuery.describe('Natural language search query'),
        project_id: projectId.describe('The ID or full path of the project'),
        directory_path: directoryPath.describe(
          'Restrict search to files under this directory path. Must be a relative path - no leading slash, no .. segments. Applies to ' +
            'scope "code" only.',
        ),
        knn: knn.describe(
          `Number of nearest neighbours to retrieve internally (default: ${SEMANTIC_SEARCH_LIMITS.knn.default}). Higher values ` +
            'improve recall at the cost of latency. Applies to scope "code" only.',
        ),
        limit: limit.describe(
          `Maximum number of results to return (default: ${SEMANTIC_SEARCH_LIMITS.limit.default}). Applies to scope "code" only.`,
        ),
        ref: refArgument,
      }),
      annotations: { readOnlyHint: true },
    },
    // scope has one value, so every call is a code search.
    async ({ q, ...args }) => searchCode('semantic_search', { ...args, query: q, queryField: 'q' }),
  );

  server.registerTool(
    'semantic_code_search',
    {
      title: 'Semantic code search',
      description: [
        'Code search using natural language (the earlier name of semantic_search with scope "code", kept for clients that call it).',
        '',
        'Returns ranked code snippets with file paths and matching content for natural-language queries.',
        'Use it when you do not know the exact symbol or file path, to see how a behavior is implemented, or to find related ' +
          'implementations.',
        'Give a concise, specific query with concrete keywords; add directory_path (e.g. "app/services/") to narrow the scope.',
        '',
        '- Results are grouped by file path with sequential line ranges merged; each file has a score (0.0 to 1.0).',
        '- The overall confidence (high/medium/low/unknown) tells how clear the best match is.',
        '- A project that is not indexed yet starts indexing and answers with an error: try again in a few minutes.',
      ].join('\n'),
      // Strict, as GitLab's (additionalProperties: false): a misspelt argument is an error, not ignored.
      inputSchema: z.strictObject({
        semantic_query: semanticQuery.describe(
          "A brief natural language query about the code you want to find in the project (e.g.: 'authentication middleware', 'database " +
            "connection logic', or 'API error handling').",
        ),
        project_id: projectId,
        directory_path: directoryPath.describe('Optional directory path to scope the search (e.g., "app/services/").'),
        knn: knn.describe('Number of nearest neighbors used internally. Higher values find more diverse results but take longer.'),
        limit: limit.describe('Maximum number of results to return.'),
        ref: refArgument,
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ semantic_query, ...args }) =>
      searchCode('semantic_code_search', { ...args, query: semantic_query, queryField: 'semantic_query' }),
  );

  server.registerTool(
    'get_code_index_status',
    {
      title: 'Get code index status',
      description:
        "Returns the state of a project's code index for semantic_code_search (pending, indexing, ready or failed), the commit it covers " +
        'and its size. Use it to see whether semantic_code_search can answer for a project yet.',
      inputSchema: z.strictObject({
        project_id: projectId,
        ref: z.string().min(1).max(255).optional().describe("Branch. Default: the project's default branch."),
      }),
      annotations: { readOnlyHint: true },
    },
    async (args) =>
      run('get_code_index_status', async () => {
        const status = await codeIndexStatus({ prisma: services.prisma, viewer, project: String(args.project_id), ref: args.ref ?? null });
        const index = status.index;
        const data = {
          project_id: status.project.id,
          project_path: status.project.fullPath,
          ref: status.ref,
          state: index?.state ?? 'not_indexed',
          searchable: status.searchable,
          commit_sha: index?.commitSha ?? null,
          files_indexed: index?.filesIndexed ?? 0,
          chunk_count: index?.chunkCount ?? 0,
          embedded_count: index?.embeddedCount ?? 0,
          // As GraphQL's codeIndex.lastError: no server paths for users.
          last_error: index?.lastError ? withoutServerPaths(index.lastError) : null,
          started_at: index?.startedAt?.toISOString() ?? null,
          finished_at: index?.finishedAt?.toISOString() ?? null,
        };
        const text = index
          ? `${data.project_path} (${data.ref}): ${data.state}${data.searchable ? ', searchable' : ', not searchable yet'}; ` +
            `${data.files_indexed} files, ${data.chunk_count} ` +
            `chunks${data.commit_sha ? `, commit ${data.commit_sha}` : ''}${data.last_error ? `; last error: ${data.last_error}` : ''}`
          : `${data.project_path} (${data.ref}) is not indexed; semantic_code_search starts indexing it on the first search.`;
        return { content: [{ type: 'text', text }], structuredContent: data };
      }),
  );

  return server;
}
