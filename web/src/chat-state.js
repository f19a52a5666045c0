// How streamed aiCompletionResponse messages become the list duo-ui's DuoChat shows: chunks are
// joined in chunkId order until the final message (chunkId null) replaces them.
import { toDisplaySources } from './sources';

const role = (value) => String(value || '').toLowerCase();

/** A message as DuoChat takes it, from an aiMessages node or an aiCompletionResponse event. */
export function toChatMessage(node) {
  return {
    id: node.id || null,
    requestId: node.requestId,
    role: role(node.role),
    content: node.content || '',
    errors: node.errors || [],
    chunkId: node.chunkId ?? null,
    timestamp: node.timestamp,
    threadId: node.threadId || null,
    extras: {
      sources: toDisplaySources(node.extras?.sources),
      hasFeedback: Boolean(node.extras?.hasFeedback),
      gatekeeper: node.extras?.gatekeeper || null,
    },
  };
}

/**
 * Applies one streamed event to the list (returns a new list). Chunks of a request the user
 * superseded (in `canceled`) are dropped.
 */
export function applyEvent(messages, event, { canceled = [], chunks = new Map() } = {}) {
  const message = toChatMessage(event);
  if (!message.requestId || canceled.includes(message.requestId)) return messages;
  const index = messages.findIndex((existing) => existing.requestId === message.requestId && existing.role === message.role);
  if (message.role === 'user') {
    if (index !== -1)
      return messages.map((existing, position) =>
        position === index ? { ...existing, id: message.id || existing.id, threadId: message.threadId || existing.threadId } : existing,
      );
    return [...messages, message];
  }
  if (message.chunkId !== null) {
    const parts = chunks.get(message.requestId) || [];
    parts[message.chunkId - 1] = message.content;
    chunks.set(message.requestId, parts);
    const partial = { ...message, content: Array.from(parts, (part) => part || '').join('') };
    if (index === -1) return [...messages, partial];
    if (messages[index].chunkId === null) return messages; // the final message already arrived
    return messages.map((existing, position) => (position === index ? partial : existing));
  }
  chunks.delete(message.requestId);
  if (index === -1) return [...messages, message];
  return messages.map((existing, position) => (position === index ? message : existing));
}

/**
 * What a gatekeeper answer offers to click: "yes" to confirm an intent, or each request of a
 * message that asked for several things, to send on its own.
 */
export function gatekeeperSuggestions(message) {
  const status = message?.extras?.gatekeeper?.status;
  if (!status || message.chunkId !== null) return null;
  if (status === 'NEEDS_CONFIRMATION') return { status, label: 'Confirm what you meant', prompts: ['yes'] };
  if (status === 'MULTI_INTENT') {
    const prompts = message.content
      .split('\n')
      .map((line) => /^\s*\d+\.\s+(.*?)\s+\([^()]*\)\s*$/.exec(line)?.[1])
      .filter(Boolean);
    return { status, label: 'Send one request at a time', prompts };
  }
  if (status === 'NEEDS_CLARIFICATION')
    return {
      status,
      label: 'Say a bit more, for example',
      prompts: ['Explain how this project is structured', 'Where is the entry point of this project?'],
    };
  return null;
}
