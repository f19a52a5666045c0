import type { Response } from 'express';
import type { Viewer } from '../auth/viewer';

/** What middleware leaves on a response for the routes after it. */
export type RequestLocals = { requestId: string; viewer: Viewer | null };

export function locals(response: Response): RequestLocals {
  return response.locals as RequestLocals;
}
