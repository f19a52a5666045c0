import { randomUUID } from 'node:crypto';

/**
 * Posts a push event to the service's webhook as GitLab sends it: JSON, `X-Gitlab-Event: Push Hook`,
 * the hook's token when given and a new event UUID, with `headers` added or overriding. A string body
 * is sent as it is (to send malformed JSON).
 */
export function postPushHook(
  serviceUrl: string,
  body: unknown,
  options: { token?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${serviceUrl}/api/v4/webhooks/push`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'X-Gitlab-Event': 'Push Hook',
      ...(options.token === undefined ? {} : { 'X-Gitlab-Token': options.token }),
      'X-Gitlab-Event-UUID': randomUUID(),
      ...options.headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
