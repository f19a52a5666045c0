import { Arg, Args, Ctx, ID, Query, Resolver } from 'type-graphql';
import { listMessages } from '../chat/messages.service';
import { findThreadForMessages } from '../chat/threads.service';
import type { GraphQLContext } from '../graphql/context';
import type { GlobalId } from '../global-id';
import { AiAgentVersionID, AiConversationThreadID } from '../graphql/scalars';
import { toAiMessage } from './ai-message.mapper';
import { AiMessage } from './ai-message.types';
import { AiConversationsThreadsConversationType, AiMessageRole } from './chat.enums';
import { connectionType, paginate } from './connection';
import { PageArguments } from './page-arguments';

export const AiMessageConnection = connectionType('AiMessage', AiMessage, 'The connection type for AiMessage.');

// A thread holds at most this many messages for listing; GitLab's storage keeps far fewer.
const LIST_LIMIT = 1000;

@Resolver()
export class AiMessagesResolver {
  @Query(() => AiMessageConnection, { description: 'Find AI messages.' })
  async aiMessages(
    @Args(() => PageArguments) page: PageArguments,
    @Ctx() context: GraphQLContext,
    @Arg('requestIds', () => [ID], { nullable: true, description: 'Array of request IDs to fetch.' }) requestIds?: string[] | null,
    @Arg('roles', () => [AiMessageRole], { nullable: true, description: 'Array of roles to fetch.' }) roles?: AiMessageRole[] | null,
    @Arg('conversationType', () => AiConversationsThreadsConversationType, {
      nullable: true,
      description: 'Conversation type of the thread.',
    })
    conversationType?: AiConversationsThreadsConversationType | null,
    @Arg('threadId', () => AiConversationThreadID, {
      nullable: true,
      description:
        'Global Id of the existing thread. If it is not specified, the last thread for the specified conversation_type will be retrieved.',
    })
    threadId?: GlobalId | null,
    @Arg('agentVersionId', () => AiAgentVersionID, { nullable: true, description: 'Global ID of the agent to answer the chat.' })
    agentVersionId?: GlobalId | null,
  ) {
    const viewer = context.viewer;
    if (!viewer) return paginate([], () => '', page);
    const thread = await findThreadForMessages(context.services.prisma, {
      userId: viewer.user.id,
      threadId: threadId ?? null,
      conversationType: conversationType ?? null,
    });
    const messages = await listMessages(context.services.prisma, {
      userId: viewer.user.id,
      threadId: thread,
      requestIds,
      roles: roles ?? null,
      limit: LIST_LIMIT,
    });
    const agent = agentVersionId ? `gid://gitlab/${agentVersionId.model}/${agentVersionId.id}` : null;
    const filtered = agent ? messages.filter((message) => message.agentVersionId === agent) : messages;
    return paginate(filtered.map(toAiMessage), (message) => message.id ?? '', page);
  }
}
