import type { ChatMessageEvent } from '../chat/chat-events';
import { renderMarkdown } from '../chat/render-markdown';
import { toGlobalId } from '../global-id';
import type { AiAdditionalContextCategory, AiMessageRole } from './chat.enums';
import type { AiMessage } from './ai-message.types';

/** The code in a failed answer's "Error code: A1000" (see chat/complete-chat.ts), or null. */
export function errorCodeOf(errors: readonly string[]): string | null {
  for (const error of errors) {
    const match = /Error code: ([A-Z]\d{4})\b/.exec(error);
    if (match) return match[1];
  }
  return null;
}

/**
 * A chat message as GraphQL's AiMessage. contentHtml is null for chunks and for errors, as GitLab does. An answer
 * carries the rendering stored with it; any other message is rendered when the field is read, once: aiMessages maps
 * every message it loads (up to 1,000, each up to 600,000 characters, about 0.5 s to render at that size) before
 * paging, and most documents never ask for it.
 */
export function toAiMessage(message: ChatMessageEvent): AiMessage {
  const items = message.contextItems;
  let html: string | null | undefined;
  const renders = message.chunkId === null && message.errors.length === 0;
  return {
    id: message.id,
    requestId: message.requestId,
    content: message.content,
    get contentHtml() {
      if (html === undefined) html = renders ? (message.contentHtml ?? renderMarkdown(message.content)) : null;
      return html;
    },
    role: message.role as AiMessageRole,
    timestamp: new Date(message.timestamp),
    type: null,
    chunkId: message.chunkId,
    errors: message.errors,
    errorCode: errorCodeOf(message.errors),
    extras: {
      additionalContext: items.map((item) => ({
        id: item.id,
        category: item.category as AiAdditionalContextCategory,
        content: item.content,
        metadata: item.metadata,
      })),
      hasFeedback: message.extras.hasFeedback ?? false,
      sources: message.extras.sources ?? [],
      contextItemIds: message.extras.contextItemIds ?? items.map((item) => item.id),
      gatekeeper: message.extras.gatekeeper
        ? {
            status: message.extras.gatekeeper.status,
            intent: message.extras.gatekeeper.intent,
            confidence: message.extras.gatekeeper.confidence,
            intents: message.extras.gatekeeper.intents,
          }
        : null,
    },
    agentVersionId: message.agentVersionId,
    threadId: message.threadId === null ? null : toGlobalId('Ai::Conversation::Thread', message.threadId),
    contextItems: items.map((item) => ({
      id: item.id,
      schemaVersion: item.schemaVersion,
      category: item.category as AiAdditionalContextCategory,
      type: item.type,
      isEnabled: item.isEnabled,
      disabledReasons: item.disabledReasons,
      metadata: item.metadata,
    })),
  };
}
