import { gitLabTokenAnswer } from '../gitlab/gitlab-identity';
import { Router, type Request } from 'express';
import type { Config } from '../config';
import { unauthenticated } from '../errors';
import type { Services } from '../services';
import { trackUsageEvent, type TrackEventInput } from '../usage/usage-events';
import { describeToken, describeUser } from '../users/users.service';
import { GITLAB_VERSION, userWebUrl, webBaseUrl } from '../instance';
import { locals } from './locals';

export { GITLAB_VERSION };

export function baseUrl(request: Request): string {
  return `${request.protocol}://${request.get('host') ?? 'localhost'}`;
}

/** The instance's public URL for links: EXTERNAL_URL, or the URL the request came to. */
export function publicUrl(config: Pick<Config, 'externalUrl'>, request: Request): string {
  return config.externalUrl ?? baseUrl(request);
}

/** Base of the web links we answer (users, projects, files): GitLab's in connected mode, else publicUrl. */
export function webLinkBase(config: Pick<Config, 'externalUrl' | 'gitlab'>, request: Request): string {
  return webBaseUrl(config.gitlab, publicUrl(config, request));
}

/** The GitLab REST endpoints IDE clients probe before anything else. */
export function restV4Routes(services: Services): Router {
  const router = Router();

  router.get('/version', (_request, response) => {
    response.json({ version: GITLAB_VERSION, revision: services.revision, kas: { enabled: false }, enterprise: true });
  });

  router.get('/user', async (_request, response) => {
    const viewer = locals(response).viewer;
    if (!viewer) throw unauthenticated();
    const user = await describeUser(services.prisma, viewer.user.id, services.externalUrl);
    // The profile is GitLab's in connected mode; the avatar stays the one we serve.
    response.json({ ...user, web_url: userWebUrl(webBaseUrl(services.config.gitlab, services.externalUrl), user.username) });
  });

  router.get('/personal_access_tokens/self', async (_request, response) => {
    const viewer = locals(response).viewer;
    if (!viewer) throw unauthenticated();
    // Connected to GitLab, the token is GitLab's: GitLab describes it.
    const fromGitLab = await gitLabTokenAnswer(services.prisma, viewer, 'personal_access_tokens/self');
    if (fromGitLab) return void response.status(fromGitLab.status).json(fromGitLab.body);
    response.json(await describeToken(services.prisma, viewer.token.id));
  });

  // The language server (17.2+) reports shown, accepted and rejected suggestions here.
  router.post('/usage_data/track_event', async (request, response) => {
    const viewer = locals(response).viewer;
    if (!viewer) throw unauthenticated();
    const body = request.body && typeof request.body === 'object' ? (request.body as TrackEventInput) : {};
    await trackUsageEvent({ redis: services.redis, prefix: services.config.redisPrefix, input: body });
    response.status(200).json({});
  });

  return router;
}
