import { Arg, Root, Subscription, Resolver, type SubscribeResolverData } from 'type-graphql';
import { requireReadableResource } from '../auth/policies';
import { chatEventIterator, type ChatMessageEvent } from '../chat/chat-events';
import { subscriberTopic } from '../chat/topics';
import { AppError, unauthenticated } from '../errors';
import type { GraphQLContext } from '../graphql/context';
import { numericId, toGlobalId, type GlobalId } from '../global-id';
import { AiAgentVersionID, AiModelID, UserID } from '../graphql/scalars';
import { toAiMessage } from './ai-message.mapper';
import { AiMessage } from './ai-message.types';
import { AiAction } from './chat.enums';

type SubscriptionArgs = {
  userId?: GlobalId | null;
  resourceId?: GlobalId | null;
  agentVersionId?: GlobalId | null;
  clientSubscriptionId?: string | null;
  aiAction?: AiAction | null;
};

const gid = (id: GlobalId | null | undefined) => (id ? toGlobalId(id.model, id.id) : null);

/**
 * Only the user named by userId may subscribe, and only to resources they can read. The events are
 * the user's own chat messages whose topic equals this subscription's arguments, as in GitLab.
 */
async function subscribe({ args, context }: SubscribeResolverData<unknown, SubscriptionArgs, GraphQLContext>) {
  const viewer = context.viewer;
  if (!viewer) throw unauthenticated('You must be signed in to subscribe');
  if (!args.userId || numericId(args.userId) !== viewer.user.id) {
    throw new AppError({
      code: 'FORBIDDEN',
      userMessage: 'You can only subscribe to your own AI responses: userId must be your user id',
      field: 'userId',
    });
  }
  if (args.resourceId) await requireReadableResource(context.services.prisma, viewer, args.resourceId, 'resourceId');
  const topic = subscriberTopic({
    userId: gid(args.userId),
    resourceId: gid(args.resourceId),
    agentVersionId: gid(args.agentVersionId),
    clientSubscriptionId: args.clientSubscriptionId,
    aiAction: args.aiAction,
  });
  return chatEventIterator(context.services.chatEvents, viewer.user.id, topic);
}

@Resolver()
export class AiCompletionResponseResolver {
  @Subscription(() => AiMessage, { nullable: true, description: 'Triggered when a response from AI integration is received.', subscribe })
  aiCompletionResponse(
    @Root() message: ChatMessageEvent,
    @Arg('userId', () => UserID, { nullable: true, description: 'ID of the user.' }) _userId?: GlobalId | null,
    @Arg('resourceId', () => AiModelID, { nullable: true, description: 'ID of the resource.' }) _resourceId?: GlobalId | null,
    @Arg('agentVersionId', () => AiAgentVersionID, { nullable: true, description: 'ID of the agent version.' })
    _agentVersionId?: GlobalId | null,
    @Arg('clientSubscriptionId', () => String, {
      nullable: true,
      description: 'Client generated ID that be subscribed to, to receive a response for the mutation.',
    })
    _clientSubscriptionId?: string | null,
    @Arg('aiAction', () => AiAction, { nullable: true, description: 'Action to subscribe to.' }) _aiAction?: AiAction | null,
  ): AiMessage {
    return toAiMessage(message);
  }
}
