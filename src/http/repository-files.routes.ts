import { Router } from 'express';
import { resolveDuoAccess } from '../auth/duo-access';
import { unauthenticated } from '../errors';
import { readIndexedFile } from '../search/code-browse.service';
import type { Services } from '../services';
import { locals } from './locals';

/**
 * GitLab's `GET /api/v4/projects/:id/repository/files/:file_path/raw?ref=`, read from the indexed
 * snapshot of the ref (what chat citations point at), for the chat page's file view.
 */
export function repositoryFilesRoutes(services: Services): Router {
  const router = Router();
  router.get('/projects/:id/repository/files/:file_path/raw', async (request, response) => {
    const viewer = locals(response).viewer;
    if (!viewer) throw unauthenticated();
    const access = resolveDuoAccess({
      prisma: services.prisma,
      userId: viewer.user.id,
      disabledCategories: services.config.disabledContextCategories,
    });
    // Looked up beside the project and awaited there (authorizeCodebaseProject); a path refused before
    // that must not leave the lookup's failure unhandled, which would end the process.
    access.catch(() => undefined);
    const file = await readIndexedFile({
      prisma: services.prisma,
      queues: services.queues,
      viewer,
      access,
      project: String(request.params.id),
      path: String(request.params.file_path),
      ref: typeof request.query.ref === 'string' ? request.query.ref : null,
    });
    response.setHeader('X-Gitlab-File-Path', encodeURI(file.path));
    response.setHeader('X-Gitlab-Blob-Id', file.blob);
    response.setHeader('X-Gitlab-Commit-Id', file.commitSha);
    response.setHeader('X-Gitlab-Ref', encodeURI(file.ref));
    if (file.language) response.setHeader('X-Gitlab-Language', file.language);
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.type('text/plain; charset=utf-8').send(file.content);
  });
  return router;
}
