import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** The subscription document GitLab's language server sends (reference section 4.4). */
export const LSP_SUBSCRIPTION = `subscription aiCompletionResponse($userId: UserID, $clientSubscriptionId: String, $aiAction: AiAction,
$htmlResponse: Boolean = true) {
  aiCompletionResponse(userId: $userId, aiAction: $aiAction, clientSubscriptionId: $clientSubscriptionId) {
    id requestId content contentHtml @include(if: $htmlResponse) errors role timestamp type chunkId
    extras { sources additionalContext { id category metadata } }
  }
}`;

/** The language server's chat mutation for GitLab 17.3+ with additional context (reference section 9). */
export const LSP_CHAT_MUTATION = `mutation chat($question: String!, $resourceId: AiModelID, $currentFileContext: AiCurrentFileInput,
$clientSubscriptionId: String, $platformOrigin: String!, $additionalContext: [AiAdditionalContextInput!]) {
  aiAction(input: { chat: { resourceId: $resourceId, content: $question, currentFile: $currentFileContext, additionalContext:
  $additionalContext }, clientSubscriptionId: $clientSubscriptionId, platformOrigin: $platformOrigin }) {
    requestId
    errors
  }
}`;

/** The language server's getAiMessages query, with the 17.5+ additional context selection. */
export const LSP_GET_MESSAGES = `query getAiMessages($requestIds: [ID!], $roles: [AiMessageRole!]) {
  aiMessages(requestIds: $requestIds, roles: $roles) {
    nodes { requestId role content contentHtml timestamp errors extras { sources additionalContext { id category metadata } } }
  }
}`;

export type StreamedMessage = {
  id: string | null;
  requestId: string;
  content: string;
  contentHtml?: string | null;
  errors: string[];
  role: string;
  chunkId: number | null;
  extras: { sources: unknown[]; additionalContext: Array<{ id: string; category: string; metadata: unknown }> } | null;
};

export type Collector = {
  messages: StreamedMessage[];
  errors: unknown[];
  /** Resolves with every message for the request once its final (non-chunk) assistant message arrived. */
  untilFinal(requestId: string, timeoutMs?: number): Promise<StreamedMessage[]>;
  /** Waits until `predicate` holds over what arrived so far. */
  until(predicate: (messages: StreamedMessage[]) => boolean, timeoutMs?: number): Promise<void>;
  stop(): void;
};

export function wsClient(url: string, token: string | null): Client {
  return createClient({
    url: `${url.replace(/^http/, 'ws')}/api/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { Authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: false,
  });
}

/** Subscribes over graphql-ws; resolves after a short pause, as graphql-ws never acknowledges a subscription. */
export async function subscribe(client: Client, variables: Record<string, unknown>, query = LSP_SUBSCRIPTION): Promise<Collector> {
  const messages: StreamedMessage[] = [];
  const errors: unknown[] = [];
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((waiter) => waiter());
  const stop = client.subscribe<{ aiCompletionResponse: StreamedMessage | null }>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        const message = result.data?.aiCompletionResponse;
        if (message) messages.push(message);
        notify();
      },
      error: (error) => {
        errors.push(error);
        notify();
      },
      complete: () => notify(),
    },
  );
  const until = (predicate: (all: StreamedMessage[]) => boolean, timeoutMs = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (predicate(messages)) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out; received ${JSON.stringify(messages).slice(0, 500)} errors ${JSON.stringify(errors).slice(0, 300)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  // Time for the server to authorize and subscribe to Redis before the test publishes anything.
  await new Promise((resolve) => setTimeout(resolve, 150));
  return {
    messages,
    errors,
    until,
    untilFinal: async (requestId, timeoutMs) => {
      await until(
        (all) =>
          all.some((message) => message.requestId === requestId && message.role.toLowerCase() === 'assistant' && message.chunkId === null),
        timeoutMs,
      );
      return messages.filter((message) => message.requestId === requestId);
    },
    stop,
  };
}
