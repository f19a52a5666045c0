import { registerEnumType } from 'type-graphql';

// GraphQL names are GitLab's (UPPERCASE); the values inside are GitLab's internal lowercase names.

export enum AiAdditionalContextCategory {
  FILE = 'file',
  SNIPPET = 'snippet',
  MERGE_REQUEST = 'merge_request',
  ISSUE = 'issue',
  DEPENDENCY = 'dependency',
  LOCAL_GIT = 'local_git',
  TERMINAL = 'terminal',
  USER_RULE = 'user_rule',
  REPOSITORY = 'repository',
  DIRECTORY = 'directory',
}
registerEnumType(AiAdditionalContextCategory, {
  name: 'AiAdditionalContextCategory',
  description: 'The category of the additional context',
  valuesConfig: Object.fromEntries(
    Object.keys(AiAdditionalContextCategory).map((key) => [
      key,
      { description: `${key.charAt(0)}${key.slice(1).toLowerCase().replace(/_/g, ' ')} content category.` },
    ]),
  ),
});

export enum AiMessageRole {
  ASSISTANT = 'assistant',
  SYSTEM = 'system',
  USER = 'user',
}
registerEnumType(AiMessageRole, { name: 'AiMessageRole', description: 'Possible message roles for AI features.' });

export enum AiMessageType {
  TOOL = 'tool',
}
registerEnumType(AiMessageType, {
  name: 'AiMessageType',
  description: 'Types of messages returned from AI features.',
  valuesConfig: { TOOL: { description: 'Tool selection message.' } },
});

export enum AiAction {
  CHAT = 'chat',
}
registerEnumType(AiAction, {
  name: 'AiAction',
  description: 'Action to subscribe to.',
  valuesConfig: { CHAT: { description: 'Chat action.' } },
});

export enum AiConversationsThreadsConversationType {
  DUO_CHAT_LEGACY = 'duo_chat_legacy',
  DUO_CODE_REVIEW = 'duo_code_review',
  DUO_QUICK_CHAT = 'duo_quick_chat',
  DUO_CHAT = 'duo_chat',
}
registerEnumType(AiConversationsThreadsConversationType, {
  name: 'AiConversationsThreadsConversationType',
  description: 'Conversation type of the thread.',
});
