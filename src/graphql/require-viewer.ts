import type { Viewer } from '../auth/viewer';
import { unauthenticated } from '../errors';
import type { GraphQLContext } from './context';

/** The signed-in viewer, or an UNAUTHENTICATED error for anonymous requests. */
export function requireViewer(context: GraphQLContext): Viewer {
  if (!context.viewer) throw unauthenticated('You must be signed in to do this');
  return context.viewer;
}
