import { Router } from 'express';
import { gitCommandDenial } from '../auth/policies';
import { RATE_LIMIT_MESSAGE, rateLimitKey } from '../auth/rate-limits';
import { AppError, badInput, unauthenticated } from '../errors';
import { LlmError } from '../llm/types';
import type { Services } from '../services';
import { generateGitCommands, GIT_COMMAND_LIMITS } from '../suggestions/git-command';
import { locals } from './locals';

// GitLab's Llm::BaseService::INVALID_MESSAGE, through Grape's bad_request!: a long prompt, no Duo seat, no model.
export const GIT_COMMAND_REFUSED = '400 Bad request - AI features are not enabled or resource is not permitted to be sent.';

/** GitLab's `POST /api/v4/ai/llm/git_command` (`glab duo ask`): thin, the work is in src/suggestions/git-command.ts. */
export function gitCommandRoutes(services: Services): Router {
  const router = Router();
  router.post('/ai/llm/git_command', async (request, response) => {
    const viewer = locals(response).viewer;
    if (!viewer) throw unauthenticated();
    // The token's scope (api only) was checked as it was authenticated (src/http/rest-scopes.ts).
    const denial = await gitCommandDenial(services.prisma, viewer);
    // GitLab's check_rate_limit!(:ai_action), the budget aiAction uses: after the token's scope, before anything else.
    const decision = await services.aiActionLimiter.consume(rateLimitKey(viewer, request.ip));
    if (!decision.allowed) {
      response
        .status(429)
        .set('Retry-After', String(decision.retryAfterSeconds))
        .json({ message: { error: RATE_LIMIT_MESSAGE } });
      return;
    }
    const body: unknown = request.body;
    const prompt = body && typeof body === 'object' ? (body as { prompt?: unknown }).prompt : undefined;
    if (prompt === undefined || prompt === null) throw badInput('prompt is missing', 'prompt');
    if (typeof prompt !== 'string') throw badInput('prompt is invalid', 'prompt');
    if (denial === 'seat' || prompt.length >= GIT_COMMAND_LIMITS.promptChars || !services.llm) {
      if (!services.llm) services.logger.warn({ event: 'git_command_no_model' }, 'git_command refused: no language model is configured');
      throw new AppError({ code: 'BAD_USER_INPUT', userMessage: GIT_COMMAND_REFUSED });
    }
    const aborted = new AbortController();
    response.on('close', () => aborted.abort());
    try {
      // Grape answers a POST with 201.
      response.status(201).json(
        await generateGitCommands({
          request: prompt,
          llm: services.llm,
          maxRetries: services.config.llm.maxRetries,
          signal: aborted.signal,
        }),
      );
    } catch (error) {
      if (!(error instanceof LlmError)) throw error;
      if (error.kind === 'aborted') return; // the client went away
      services.logger.warn({ event: 'git_command_model_failed', err: error }, 'the model did not answer a git_command request');
      response.status(503).json({ message: '503 Service Unavailable' });
    }
  });
  return router;
}
