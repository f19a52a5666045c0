import { Router } from 'express';
import type { Services } from '../services';
import { findUserInitials } from '../users/users.service';
import { rowId } from '../global-id';

const PALETTE = ['#6666c4', '#4e9a06', '#c17d11', '#a33b74', '#3465a4', '#cc0000', '#2e8f83'];

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);

/**
 * The user avatars `avatarUrl` points at: the user's initials on a colour picked from the id,
 * as GitLab draws users without an uploaded picture. Avatars are public in GitLab too.
 */
export function avatarRoutes(services: Pick<Services, 'prisma'>): Router {
  const router = Router();
  router.get('/uploads/-/system/user/avatar/:id/avatar.svg', async (request, response) => {
    const id = rowId(request.params.id);
    const initials = id === null ? null : await findUserInitials(services.prisma, id);
    if (initials === null) {
      response.status(404).type('text/plain').send('404 Not Found');
      return;
    }
    const colour = PALETTE[id! % PALETTE.length];
    response
      .type('image/svg+xml')
      .set('cache-control', 'public, max-age=3600')
      .send(
        `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="32" ` +
          `fill="${colour}"/>` +
          `<text x="32" y="40" font-family="sans-serif" font-size="24" fill="#fff" ` +
          `text-anchor="middle">${escapeXml(initials)}</text></svg>`,
      );
  });
  return router;
}
