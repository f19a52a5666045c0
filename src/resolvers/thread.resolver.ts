import { Arg, Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { deleteThread, listThreads } from '../chat/threads.service';
import { notFound } from '../errors';
import type { GraphQLContext } from '../graphql/context';
import { numericId, toGlobalId, type GlobalId } from '../global-id';
import { requireViewer } from '../graphql/require-viewer';
import { AiConversationThreadID } from '../graphql/scalars';
import { AiConversationsThreadsConversationType } from './chat.enums';
import { connectionType, paginate } from './connection';
import { PageArguments } from './page-arguments';
import { AiConversationsThread, DeleteConversationThreadInput, DeleteConversationThreadPayload } from './thread.types';

export const AiConversationsThreadConnection = connectionType(
  'AiConversationsThread',
  AiConversationsThread,
  'The connection type for AiConversationsThread.',
);

@Resolver()
export class ThreadResolver {
  @Query(() => AiConversationsThreadConnection, { description: 'List conversation threads of AI features.' })
  async aiConversationThreads(
    @Args(() => PageArguments) page: PageArguments,
    @Ctx() context: GraphQLContext,
    @Arg('conversationType', () => AiConversationsThreadsConversationType, {
      nullable: true,
      description: 'Conversation type of the thread.',
    })
    conversationType?: AiConversationsThreadsConversationType | null,
    @Arg('id', () => AiConversationThreadID, { nullable: true, description: 'ID of the thread.' }) id?: GlobalId | null,
  ) {
    const viewer = requireViewer(context);
    const threadId = id ? (numericId(id) ?? -1) : null;
    const threads = await listThreads(context.services.prisma, { userId: viewer.user.id, conversationType, threadId });
    const nodes: AiConversationsThread[] = threads.map((thread) => ({
      id: toGlobalId('Ai::Conversation::Thread', thread.id),
      conversationType: thread.conversationType as AiConversationsThreadsConversationType,
      createdAt: thread.createdAt,
      lastUpdatedAt: thread.lastUpdatedAt,
      title: thread.title,
    }));
    return paginate(nodes, (node) => node.id, page);
  }

  @Mutation(() => DeleteConversationThreadPayload, { nullable: true, description: 'Deletes a conversation thread.' })
  async deleteConversationThread(
    @Arg('input', () => DeleteConversationThreadInput) input: DeleteConversationThreadInput,
    @Ctx() context: GraphQLContext,
  ): Promise<DeleteConversationThreadPayload> {
    const viewer = requireViewer(context);
    const threadId = numericId(input.threadId);
    if (threadId === null) throw notFound('Thread not found. It may have expired.');
    await deleteThread(context.services.prisma, { userId: viewer.user.id, threadId });
    return { clientMutationId: input.clientMutationId ?? null, errors: [], success: true };
  }
}
