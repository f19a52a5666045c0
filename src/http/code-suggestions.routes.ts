import express, { Router, type Request, type Response } from 'express';
import { codeSuggestionsDenial, findReadableProject } from '../auth/policies';
import { resolveDuoAccess, type DuoAccess } from '../auth/duo-access';
import type { Services } from '../services';
import { safeJsonBody } from './safe-json.middleware';
import { COMPLETION_LIMITS, parseCompletionRequest } from '../suggestions/completion-request';
import { collectSuggestion, suggest } from '../suggestions/completions.service';
import { connectionDetails } from '../suggestions/connection-details';
import { locals } from './locals';
import { GITLAB_VERSION } from '../instance';
import { publicUrl } from './rest-v4.routes';
import { RATE_LIMIT_MESSAGE, rateLimitKey } from '../auth/rate-limits';

export const NO_MODEL_NOTICE = 'no language model is configured: set LLM_PROVIDER, LLM_MODEL and LLM_BASE_URL';

const MONOLITH = { 'X-GitLab-Error-Origin': 'monolith' };

/** GitLab's /api/v4/code_suggestions endpoints: thin, the work is in src/suggestions. */
export function codeSuggestionsRoutes(services: Services): Router {
  const router = Router();
  // GitLab's code_suggestions_api_endpoint limit, apart from the API's own; session generations share it.
  const limiter = services.codeSuggestionsLimiter;
  router.use(express.json({ limit: COMPLETION_LIMITS.bodyBytes }), safeJsonBody(services.config.maxJsonDepth));

  // Who may use code suggestions: a signed-in user, an api or ai_features token, a Duo seat.
  const authorize = async (_request: Request, response: Response): Promise<DuoAccess | null> => {
    const viewer = locals(response).viewer;
    if (!viewer) {
      response.status(401).set(MONOLITH).json({ message: '401 Unauthorized' });
      return null;
    }
    // The token's scope was checked as it was authenticated (src/http/rest-scopes.ts).
    const checked = await codeSuggestionsDenial(
      viewer,
      () => resolveDuoAccess({ prisma: services.prisma, userId: viewer.user.id, disabledCategories: [] }),
      { scope: false },
    );
    if (checked.denial !== null) {
      response.status(401).set(MONOLITH).json({ message: '401 Unauthorized' });
      return null;
    }
    const decision = await limiter.consume(rateLimitKey(viewer, undefined));
    if (!decision.allowed) {
      response.status(429).set('Retry-After', String(decision.retryAfterSeconds)).json({ error: RATE_LIMIT_MESSAGE });
      return null;
    }
    return checked.access;
  };

  router.post('/completions', async (request, response) => {
    if (!(await authorize(request, response))) return;
    const userId = locals(response).viewer!.user.id;
    const completion = parseCompletionRequest(request.body);
    const abort = new AbortController();
    response.on('close', () => abort.abort());
    const suggestion = await suggest({
      request: completion,
      llm: services.llm,
      maxRetries: services.config.llm.maxRetries,
      detect: (input) => services.intent.detect(input, userId),
      signal: abort.signal,
    });
    if (!suggestion.text) response.set('X-Duo-Slice-Notice', NO_MODEL_NOTICE);
    if (completion.stream && suggestion.text) {
      await streamSuggestion(request, response, suggestion.text, suggestion);
      return;
    }
    try {
      response.json(await collectSuggestion(suggestion));
    } catch (error) {
      services.logger.warn(
        { event: 'code_suggestion_failed', requestId: locals(response).requestId, err: error },
        'code suggestion failed',
      );
      response
        .set('X-Duo-Slice-Notice', 'the language model failed; no suggestion')
        .json({ ...(await collectSuggestion({ ...suggestion, text: null })) });
    }
  });

  // As a GitLab instance with direct connections turned off answers: the language server logs it
  // as "not critical", backs off, and sends suggestions through /completions instead.
  router.post('/direct_access', async (request, response) => {
    if (!(await authorize(request, response))) return;
    response.status(403).json({ message: '403 Forbidden - Direct connections are disabled' });
  });

  // GitLab 18.3+: telemetry details of the instance, for the user's IDE (201, as GitLab answers).
  router.post('/connection_details', async (request, response) => {
    const access = await authorize(request, response);
    if (!access) return;
    response.status(201).json(
      connectionDetails({
        userId: locals(response).viewer!.user.id,
        access,
        externalUrl: publicUrl(services.config, request),
        version: GITLAB_VERSION,
      }),
    );
  });

  router.post('/enabled', async (request, response) => {
    if (!(await authorize(request, response))) return;
    const body = request.body as { project_path?: unknown } | undefined;
    const projectPath = typeof body?.project_path === 'string' ? body.project_path : null;
    if (!projectPath) return void response.status(400).json({ error: 'project_path is missing' });
    const project = await findReadableProject(services.prisma, locals(response).viewer, { fullPath: projectPath });
    if (!project) return void response.status(404).json({ message: '404 Project Not Found' });
    response.status(project.duoFeaturesEnabled ? 200 : 403).end();
  });

  async function streamSuggestion(
    request: Request,
    response: Response,
    text: AsyncIterable<string>,
    suggestion: Awaited<ReturnType<typeof suggest>>,
  ) {
    const sse = request.get('x-supports-sse-streaming') === 'true';
    response.status(200);
    response.set({
      'Cache-Control': 'no-cache',
      'X-Intent': suggestion.decision.intent,
      'X-Generation-Type': suggestion.decision.generationType ?? '',
    });
    if (sse) response.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'X-Streaming-Format': 'sse' });
    else response.set('Content-Type', 'text/plain; charset=utf-8');
    response.flushHeaders();
    const event = (name: string, data: unknown) => response.write(`event: ${name}\r\ndata: ${JSON.stringify(data)}\r\n\r\n`);
    if (sse)
      event('stream_start', {
        metadata: {
          model: { engine: suggestion.model.engine, name: suggestion.model.name, lang: suggestion.model.lang },
          timestamp: suggestion.created,
          intent: suggestion.decision.intent,
          generation_type: suggestion.decision.generationType,
        },
      });
    try {
      for await (const piece of text) {
        if (sse) event('content_chunk', { choices: [{ delta: { content: piece }, index: 0 }] });
        else response.write(piece);
      }
    } catch (error) {
      services.logger.warn(
        { event: 'code_suggestion_stream_failed', requestId: locals(response).requestId, err: error },
        'code suggestion stream failed',
      );
    }
    if (sse) event('stream_end', null);
    response.end();
  }

  return router;
}
