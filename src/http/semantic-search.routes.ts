import { Router } from 'express';
import { resolveDuoAccess } from '../auth/duo-access';
import { badInput, unauthenticated } from '../errors';
import { codebaseSearch } from '../search/codebase.service';
import type { Services } from '../services';
import { locals } from './locals';

function boundedInt(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 100) throw badInput(`${name} must be a whole number from 1 to 100`, name);
  return number;
}

/** GitLab's `GET /api/v4/projects/:id/search/semantic`: thin, the work is in src/search. */
export function semanticSearchRoutes(services: Services): Router {
  const router = Router();
  router.get('/projects/:id/search/semantic', async (request, response) => {
    const viewer = locals(response).viewer;
    if (!viewer) throw unauthenticated();
    const query = typeof request.query.q === 'string' ? request.query.q : '';
    if (!query.trim()) throw badInput('q is missing', 'q');
    if (query.length > 2000) throw badInput('q is too long (maximum is 2000 characters)', 'q');
    const directory = typeof request.query.directory_path === 'string' ? request.query.directory_path : null;
    const knn = boundedInt(request.query.knn, 'knn', 64);
    const limit = boundedInt(request.query.limit, 'limit', 20);
    const access = resolveDuoAccess({ prisma: services.prisma, userId: viewer.user.id, disabledCategories: services.config.disabledContextCategories });
    const result = await codebaseSearch({
      prisma: services.prisma,
      queues: services.queues,
      embedder: services.embedder,
      viewer,
      access,
      project: decodeURIComponent(String(request.params.id)),
      query,
      directory,
      ref: typeof request.query.ref === 'string' ? request.query.ref : null,
      limit,
      candidates: knn,
    });
    response.json({
      confidence: result.confidence,
      commit_sha: result.commitSha,
      results: result.files.map((file) => ({
        path: file.path,
        blob_id: file.blob,
        language: file.language,
        score: Number(file.score.toFixed(4)),
        snippets: file.snippets.map((snippet) => ({ start_line: snippet.startLine, end_line: snippet.endLine, content: snippet.content, score: Number(snippet.score.toFixed(4)), symbol: snippet.symbol })),
      })),
    });
  });
  return router;
}
