import express, { Router } from 'express';
import { GitLabClient } from '../gitlab/gitlab-client';
import { ensureGitLabProject } from '../gitlab/mirror';
import { parsePushEvent } from '../indexing/push-event';
import { handlePush, handleSystemHook } from '../indexing/push-webhook.service';
import type { Services } from '../services';
import { sendError } from './http-errors';
import { safeJsonBody } from './safe-json.middleware';

/**
 * GitLab's webhooks: a project hook's push event, authenticated by the project's secret (X-Gitlab-Token),
 * and, connected to GitLab, a system hook's events, authenticated by GITLAB_SYSTEM_HOOK_TOKEN; never by a
 * user's token.
 */
export function webhookRoutes(services: Services): Router {
  const router = Router();
  router.use(express.json({ limit: services.config.maxBodyBytes, type: () => true }), safeJsonBody(services.config.maxJsonDepth));
  const connected = services.config.gitlab;
  const gitlab = connected ? new GitLabClient({ ...connected, logger: services.logger }) : null;
  const common = () => ({
    prisma: services.prisma,
    redis: services.redis,
    redisPrefix: services.config.redisPrefix,
    queues: services.queues,
    debounceMs: services.config.indexing.debounceMs,
  });

  router.post('/push', async (request, response) => {
    const kind = request.get('X-Gitlab-Event');
    const token = request.get('X-Gitlab-Token') ?? null;
    const eventUuid = request.get('X-Gitlab-Event-UUID') ?? null;
    if (kind === 'System Hook' && gitlab) {
      const outcome = await handleSystemHook({
        ...common(),
        body: request.body,
        token,
        eventUuid,
        systemHookToken: connected?.systemHookToken,
        ensureProject: (gitlabProjectId) => ensureGitLabProject({ prisma: services.prisma, gitlab, gitlabProjectId }),
      });
      if ('eventName' in outcome) {
        response.status(200).json({ ignored: outcome.ignored, event_name: outcome.eventName });
        return;
      }
      response.status(202).json(pushAnswer(outcome));
      return;
    }
    if (kind !== 'Push Hook') {
      const accepted = gitlab ? '"Push Hook" or "System Hook"' : '"Push Hook"';
      sendError(request, response, 400, `X-Gitlab-Event: must be ${accepted}`, 'X-Gitlab-Event');
      return;
    }
    const outcome = await handlePush({
      ...common(),
      event: parsePushEvent(request.body),
      token,
      eventUuid,
      projectBy: gitlab ? 'gitlab_id' : 'path',
    });
    response.status(202).json(pushAnswer(outcome));
  });
  return router;
}

function pushAnswer(outcome: Awaited<ReturnType<typeof handlePush>>) {
  return {
    job_id: outcome.jobId,
    project_id: outcome.projectId,
    ref: outcome.ref,
    duplicate: outcome.duplicate,
    ...(outcome.ignored ? { ignored: outcome.ignored } : {}),
  };
}
