import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { deleteThread } from '../chat/threads.service';
import { notFound } from '../errors';
import type { GraphQLContext } from '../graphql/context';
import { numericId } from '../graphql/global-id';
import { requireViewer } from '../graphql/require-viewer';
import { DeleteConversationThreadInput, DeleteConversationThreadPayload } from './thread.types';

@Resolver()
export class ThreadResolver {
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
