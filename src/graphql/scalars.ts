import { GraphQLScalarType, Kind, GraphQLError } from 'graphql';
import { globalIdScalar } from './global-id-scalar';

export const UserID = globalIdScalar({
  name: 'UserID',
  model: 'User',
  description: 'A `UserID` is a global ID. It is encoded as a string, e.g. `"gid://gitlab/User/1"`.',
});
export const ProjectID = globalIdScalar({
  name: 'ProjectID',
  model: 'Project',
  description: 'A `ProjectID` is a global ID. It is encoded as a string, e.g. `"gid://gitlab/Project/1"`.',
});
export const NamespaceID = globalIdScalar({
  name: 'NamespaceID',
  model: 'Namespace',
  // Web Duo Chat sends its page's top-level group (`root_ancestor.to_global_id`) as rootNamespaceId.
  kinds: ['Group', 'Namespaces::UserNamespace', 'Namespaces::ProjectNamespace'],
  description: 'A `NamespaceID` is a global ID. It is encoded as a string, e.g. `"gid://gitlab/Namespace/1"`.',
});
export const AiModelID = globalIdScalar({
  name: 'AiModelID',
  model: null,
  description: 'A `AiModelID` is a global ID. It is encoded as a string, e.g. `"gid://gitlab/Project/1"`.',
});
export const AiConversationThreadID = globalIdScalar({
  name: 'AiConversationThreadID',
  model: 'Ai::Conversation::Thread',
  description: 'A `AiConversationThreadID` is a global ID. It is encoded as a string, e.g. `"gid://gitlab/Ai::Conversation::Thread/1"`.',
});
export const AiAgentVersionID = globalIdScalar({
  name: 'AiAgentVersionID',
  model: 'Ai::AgentVersion',
  description: 'A `AiAgentVersionID` is a global ID. It is encoded as a string, e.g. `"gid://gitlab/Ai::AgentVersion/1"`.',
});

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

function parseTime(value: unknown): Date {
  if (typeof value !== 'string' || !ISO_8601.test(value) || Number.isNaN(Date.parse(value))) {
    throw new GraphQLError('Time must be an ISO 8601 date-time, e.g. "2026-11-22T10:00:00Z"', { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return new Date(value);
}

/** GitLab's `Time`: an ISO 8601 date-time string. */
export const Time = new GraphQLScalarType<Date, string>({
  name: 'Time',
  description:
    'Time represented in ISO 8601.\n\nFor example: "2021-03-09T14:58:50+00:00".\n\nSee ' +
    '`https://www.iso.org/iso-8601-date-and-time-format.html`.',
  serialize: (value) => (value instanceof Date ? value : new Date(value as string)).toISOString(),
  parseValue: parseTime,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Time must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return parseTime(ast.value);
  },
});
