import { Router, type RequestHandler } from 'express';
import type { RequestLimiter } from '../auth/rate-limits';
import { sendRateLimited, wrongTokenRetryAfter } from './rate-limit.middleware';
import { authenticateToken } from '../auth/authenticate';
import { tokenFromHeaders } from '../auth/tokens';
import { isAppError } from '../errors';
import type { Services } from '../services';
import { describeTokenInfo } from '../users/users.service';
import { locals } from './locals';
import { gitLabTokenAnswer } from '../gitlab/gitlab-identity';

const INVALID_TOKEN = { error: 'invalid_token', error_description: 'The access token is invalid', state: 'unauthorized' };

/**
 * GitLab's Doorkeeper `GET /oauth/token/info`, which the language server calls for tokens that do
 * not look like personal access tokens. Our tokens answer in Doorkeeper's shape; a missing, wrong,
 * expired or revoked token gets Doorkeeper's 401.
 */
export function oauthRoutes(services: Services, rateLimit: RequestHandler, wrongTokens: RequestLimiter): Router {
  const router = Router();
  router.get(
    '/token/info',
    async (request, response, next) => {
      // Headers only: a token in the query string would end up in access logs.
      const token = tokenFromHeaders(request.headers);
      if (!token)
        return void response.status(401).set('WWW-Authenticate', 'Bearer realm="Doorkeeper", error="invalid_token"').json(INVALID_TOKEN);
      try {
        locals(response).viewer = await authenticateToken(services.prisma, token, { surface: 'token_info' });
      } catch (error) {
        if (isAppError(error) && error.code === 'UNAUTHENTICATED') {
          const wait = await wrongTokenRetryAfter(wrongTokens, request.ip);
          if (wait !== null) return sendRateLimited(request, response, wait);
          return void response.status(401).set('WWW-Authenticate', 'Bearer realm="Doorkeeper", error="invalid_token"').json(INVALID_TOKEN);
        }
        return next(error);
      }
      next();
    },
    rateLimit,
    async (_request, response) => {
      // Connected to GitLab, the token is GitLab's: GitLab describes it.
      const fromGitLab = await gitLabTokenAnswer(services.prisma, locals(response).viewer!, 'oauth/token/info');
      if (fromGitLab) return void response.status(fromGitLab.status).json(fromGitLab.body);
      response.json(await describeTokenInfo(services.prisma, locals(response).viewer!.token.id));
    },
  );
  return router;
}
