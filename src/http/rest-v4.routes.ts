import { Router, type Request } from 'express';
import { unauthenticated } from '../errors';
import type { Services } from '../services';
import { describeToken, describeUser } from '../users/users.service';
import { GITLAB_VERSION } from '../instance';
import { locals } from './locals';

export { GITLAB_VERSION };

export function baseUrl(request: Request): string {
  return `${request.protocol}://${request.get('host') ?? 'localhost'}`;
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
    response.json(await describeUser(services.prisma, viewer.user.id, services.externalUrl));
  });

  router.get('/personal_access_tokens/self', async (_request, response) => {
    const viewer = locals(response).viewer;
    if (!viewer) throw unauthenticated();
    response.json(await describeToken(services.prisma, viewer.token.id));
  });

  return router;
}
