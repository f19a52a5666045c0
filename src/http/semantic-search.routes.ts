import { Router, type Request } from 'express';
import { AppError, badInput, isAppError, unauthenticated } from '../errors';
import { directoryPathProblem, SEMANTIC_SEARCH_LIMITS } from '../search/semantic-code-results';
import { semanticCodeSearch } from '../search/semantic-code-search';
import { requireSearchableQuery } from '../search/text-query';
import type { Services } from '../services';
import { locals } from './locals';
import { webLinkBase } from './rest-v4.routes';

// Grape's messages, as GitLab's REST API words a bad parameter.
function boundedInt(value: unknown, name: string, bounds: { min: number; max: number; default: number }): number {
  if (value === undefined) return bounds.default;
  const number = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number)) throw badInput(`${name} is invalid`, name);
  if (number < bounds.min || number > bounds.max) throw badInput(`${name} does not have a valid value`, name);
  return number;
}

function singleString(request: Request, name: string): string | undefined {
  const value = request.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badInput(`${name} is invalid`, name);
  return value;
}

export type SemanticSearchParameters = { query: string; directory: string | null; knn: number; limit: number; ref: string | null };

/** `q`, `directory_path`, `knn`, `limit` (and our `ref`) with GitLab's limits; a 400 names the parameter. */
export function parseSemanticSearchParameters(request: Request): SemanticSearchParameters {
  const query = singleString(request, 'q');
  if (query === undefined) throw badInput('q is missing', 'q');
  if (!query.trim()) throw badInput('q is empty', 'q');
  if (query.length > SEMANTIC_SEARCH_LIMITS.queryChars)
    throw badInput(`q must be less than ${SEMANTIC_SEARCH_LIMITS.queryChars} characters`, 'q');
  const directory = singleString(request, 'directory_path') ?? null;
  const directoryProblem = directory === null ? null : directoryPathProblem(directory);
  if (directoryProblem) throw badInput(directoryProblem, 'directory_path');
  const ref = singleString(request, 'ref') ?? null;
  return {
    query,
    directory,
    knn: boundedInt(singleString(request, 'knn'), 'knn', SEMANTIC_SEARCH_LIMITS.knn),
    limit: boundedInt(singleString(request, 'limit'), 'limit', SEMANTIC_SEARCH_LIMITS.limit),
    ref: ref?.trim() ? ref : null,
  };
}

/** GitLab's `GET /api/v4/projects/:id/search/semantic` (18.11): thin, the work is in src/search. */
export function semanticSearchRoutes(services: Services): Router {
  const router = Router();
  router.get(['/projects/:id/search/semantic', '/projects/:id/-/search/semantic'], async (request, response) => {
    const viewer = locals(response).viewer;
    if (!viewer) throw unauthenticated();
    const parameters = parseSemanticSearchParameters(request);
    requireSearchableQuery(parameters.query, 'q');
    const project = String(request.params.id);
    try {
      const answer = await semanticCodeSearch({
        prisma: services.prisma,
        queues: services.queues,
        embedder: services.embedder,
        reranking: services.reranking,
        disabledCategories: services.config.disabledContextCategories,
        externalUrl: webLinkBase(services.config, request),
        viewer,
        project,
        query: parameters.query,
        directory: parameters.directory,
        ref: parameters.ref,
        limit: parameters.limit,
        candidates: parameters.knn,
        dataDir: services.config.dataDir,
      });
      response.json(answer);
    } catch (error) {
      // GitLab answers 422 while a project has no embeddings (indexing starts on the first search).
      if (isAppError(error) && error.code === 'CONFLICT') {
        response.status(422).json({ message: `Project '${project}' has no embeddings`, detail: error.userMessage });
        return;
      }
      if (isAppError(error) && error.field === 'directory')
        throw new AppError({
          code: error.code,
          userMessage: error.userMessage.replace(/^directory/, 'directory_path'),
          field: 'directory_path',
        });
      throw error;
    }
  });
  return router;
}
