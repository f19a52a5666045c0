import express, { Router } from 'express';
import { parsePushEvent } from '../indexing/push-event';
import { handlePush } from '../indexing/push-webhook.service';
import type { Services } from '../services';
import { sendError } from './http-errors';
import { safeJsonBody } from './safe-json.middleware';

/** GitLab's webhooks: authenticated by the project's secret (X-Gitlab-Token), not by a user's token. */
export function webhookRoutes(services: Services): Router {
  const router = Router();
  router.use(express.json({ limit: services.config.maxBodyBytes, type: () => true }), safeJsonBody(services.config.maxJsonDepth));

  router.post('/push', async (request, response) => {
    const kind = request.get('X-Gitlab-Event');
    if (kind !== 'Push Hook') {
      sendError(request, response, 400, 'X-Gitlab-Event: must be "Push Hook"', 'X-Gitlab-Event');
      return;
    }
    const outcome = await handlePush({
      prisma: services.prisma,
      redis: services.redis,
      redisPrefix: services.config.redisPrefix,
      queues: services.queues,
      event: parsePushEvent(request.body),
      token: request.get('X-Gitlab-Token') ?? null,
      eventUuid: request.get('X-Gitlab-Event-UUID') ?? null,
      debounceMs: services.config.indexing.debounceMs,
    });
    response.status(202).json({
      job_id: outcome.jobId,
      project_id: outcome.projectId,
      ref: outcome.ref,
      duplicate: outcome.duplicate,
      ...(outcome.ignored ? { ignored: outcome.ignored } : {}),
    });
  });
  return router;
}
