import type { Response } from 'express';
import type { Viewer } from '../auth/viewer';

/** What middleware leaves on a response for the routes after it. */
export type RequestLocals = {
  requestId: string;
  viewer: Viewer | null;
  /** performance.now() when the request arrived. */
  receivedAt: number;
};

export function locals(response: Response): RequestLocals {
  return response.locals as RequestLocals;
}
