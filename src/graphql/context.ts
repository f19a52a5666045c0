import type { Viewer } from '../auth/viewer';
import { NO_DUO_ACCESS, resolveDuoAccess, type DuoAccess } from '../auth/duo-access';
import type { Services } from '../services';

export type GraphQLContext = {
  requestId: string;
  /** performance.now() when the request (or the subscription) arrived. */
  receivedAt: number;
  viewer: Viewer | null;
  services: Services;
  /** The viewer's Duo access, computed at most once per request. */
  duoAccess: () => Promise<DuoAccess>;
};

export function createGraphQLContext(
  services: Services,
  viewer: Viewer | null,
  requestId: string,
  receivedAt: number = performance.now(),
): GraphQLContext {
  let duoAccess: Promise<DuoAccess> | undefined;
  return {
    requestId,
    receivedAt,
    viewer,
    services,
    duoAccess: () => {
      if (!viewer) return Promise.resolve(NO_DUO_ACCESS);
      duoAccess ??= resolveDuoAccess({
        prisma: services.prisma,
        userId: viewer.user.id,
        disabledCategories: services.config.disabledContextCategories,
      });
      return duoAccess;
    },
  };
}
