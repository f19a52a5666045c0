// The page talks to duo-slice only through the public API the IDE clients use: GraphQL over
// HTTP, graphql-ws for aiCompletionResponse, and GitLab's REST files API.
import { createClient } from 'graphql-ws';

const GRAPHQL_PATH = '/api/graphql';

/** An error the page shows as it is: the server's message, with the GraphQL code or HTTP status. */
export class ApiError extends Error {
  constructor(message, { code = null, status = null } = {}) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** `onUnauthorized` runs when the server stops accepting the token (revoked or expired while signed in). */
export function createApi(token, { onUnauthorized = () => {} } = {}) {
  const headers = { Authorization: `Bearer ${token}` };

  async function graphql(query, variables = {}) {
    const response = await fetch(GRAPHQL_PATH, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    let body = null;
    try {
      body = await response.json();
    } catch {
      throw new ApiError(`The server answered ${response.status} without JSON`, { status: response.status });
    }
    if (response.status === 401) onUnauthorized();
    if (body.errors?.length) {
      const [first] = body.errors;
      throw new ApiError(first.message, { code: first.extensions?.code ?? null, status: response.status });
    }
    return body.data;
  }

  async function rawFile({ project, path, ref }) {
    const query = ref ? `?ref=${encodeURIComponent(ref)}` : '';
    const url = `/api/v4/projects/${encodeURIComponent(project)}/repository/files/${encodeURIComponent(path)}/raw${query}`;
    const response = await fetch(url, { headers });
    if (!response.ok) {
      if (response.status === 401) onUnauthorized();
      const body = await response.json().catch(() => ({}));
      throw new ApiError(body.message || body.error || `${response.status}`, { status: response.status, code: body.error ?? null });
    }
    return {
      content: await response.text(),
      commitSha: response.headers.get('X-Gitlab-Commit-Id'),
      language: response.headers.get('X-Gitlab-Language'),
    };
  }

  let socket = null;
  function subscriptions() {
    if (!socket) {
      const url = new URL(GRAPHQL_PATH, window.location.href);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      socket = createClient({ url: url.toString(), connectionParams: headers, lazy: true, retryAttempts: 5 });
    }
    return socket;
  }

  /** Subscribes; `onMessage` gets each aiCompletionResponse, `onError` a failure. Returns the unsubscribe function. */
  function subscribe(query, variables, { onMessage, onError }) {
    return subscriptions().subscribe(
      { query, variables },
      {
        next: (result) => {
          if (result.errors?.length) onError(new ApiError(result.errors[0].message, { code: result.errors[0].extensions?.code ?? null }));
          else onMessage(result.data);
        },
        error: (error) => onError(error instanceof Error ? error : new ApiError('The live connection to the server was lost')),
        complete: () => {},
      },
    );
  }

  function close() {
    socket?.dispose();
    socket = null;
  }

  return { graphql, rawFile, subscribe, close };
}

export const QUERIES = {
  currentUser: `query duoChatCurrentUser { currentUser { id username name duoChatAvailable duoChatAvailableFeatures } }`,
  projects:
    `query duoChatProjects($search: String) { projects(membership: true, search: $search, first: 100) { nodes { id fullPath name ` +
    `defaultBranch duoFeaturesEnabled } } }`,
  codeIndex: `query duoChatCodeIndex($fullPath: ID!, $ref: String) {
    project(fullPath: $fullPath) { id fullPath codeIndex(ref: $ref) { ref state commitSha filesIndexed filesTotal chunkCount embeddedCount
    lastError } }
  }`,
  directories: `query duoChatDirectories($fullPath: ID!, $ref: String, $search: String) {
    project(fullPath: $fullPath) { codeIndex(ref: $ref) { directories(search: $search, first: 100) } }
  }`,
  indexCreate: `mutation duoChatIndex($projectPath: ID!, $ref: String) {
    projectCodeIndexCreate(input: { projectPath: $projectPath, ref: $ref }) { errors codeIndex { ref state filesIndexed filesTotal
    chunkCount embeddedCount } }
  }`,
  threads:
    `query duoChatThreads { aiConversationThreads(conversationType: DUO_CHAT, first: 50) { nodes { id title lastUpdatedAt ` +
    `conversationType createdAt } } }`,
  messages: `query duoChatMessages($threadId: AiConversationThreadID) {
    aiMessages(threadId: $threadId, conversationType: DUO_CHAT, first: 100) { nodes { id requestId role content errors timestamp threadId
    extras { sources hasFeedback gatekeeper { status intent intents } } } }
  }`,
  chat: `mutation duoChat($question: String!, $resourceId: AiModelID, $clientSubscriptionId: String, $additionalContext:
  [AiAdditionalContextInput!], $threadId: AiConversationThreadID, $conversationType: AiConversationsThreadsConversationType) {
    aiAction(input: { chat: { content: $question, resourceId: $resourceId, additionalContext: $additionalContext }, clientSubscriptionId:
    $clientSubscriptionId, platformOrigin: "web", threadId: $threadId, conversationType: $conversationType }) { requestId errors threadId }
  }`,
  feedback: `mutation duoChatFeedback($input: DuoUserFeedbackInput!) { duoUserFeedback(input: $input) { errors } }`,
  completion: `subscription duoChatCompletion($userId: UserID, $clientSubscriptionId: String) {
    aiCompletionResponse(userId: $userId, aiAction: CHAT, clientSubscriptionId: $clientSubscriptionId) {
      id requestId content errors role timestamp type chunkId threadId
      extras { sources hasFeedback gatekeeper { status intent intents } }
    }
  }`,
};
