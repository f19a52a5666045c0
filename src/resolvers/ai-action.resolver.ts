import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { takeAiAction } from '../auth/rate-limits';
import { submitChat } from '../chat/submit-chat';
import { badInput } from '../errors';
import type { GraphQLContext } from '../graphql/context';
import { toGlobalId } from '../global-id';
import { requireViewer } from '../graphql/require-viewer';
import { AiActionInput, AiActionPayload } from './ai-action.types';

const METHODS = ['chat'] as const;

@Resolver()
export class AiActionResolver {
  @Mutation(() => AiActionPayload, {
    nullable: true,
    description: 'Mutates an AI action: stores the message and answers it asynchronously through the aiCompletionResponse subscription.',
  })
  async aiAction(@Arg('input', () => AiActionInput) input: AiActionInput, @Ctx() context: GraphQLContext): Promise<AiActionPayload> {
    const viewer = requireViewer(context);
    // GitLab checks the ai_action limit first, whatever the request holds.
    await takeAiAction(context.services.aiActionLimiter, viewer);
    if (METHODS.filter((method) => input[method]).length !== 1 || !input.chat)
      throw badInput('Only one method argument is required', 'chat');
    const { chat } = input;
    const { services } = context;
    const result = await submitChat({
      prisma: services.prisma,
      redis: services.redis,
      redisPrefix: services.config.redisPrefix,
      queues: services.queues,
      events: services.chatEvents,
      viewer,
      access: await context.duoAccess(),
      gatekeeper: services.gatekeeper,
      logger: services.logger,
      request: {
        content: chat.content,
        resourceId: chat.resourceId ?? null,
        projectId: input.projectId ?? null,
        agentVersionId: chat.agentVersionId ?? null,
        additionalContext: chat.additionalContext ?? [],
        currentFile: chat.currentFile ?? null,
        clientSubscriptionId: input.clientSubscriptionId ?? null,
        conversationType: input.conversationType ?? null,
        threadId: input.threadId ?? null,
        platformOrigin: input.platformOrigin ?? null,
        skipGatekeeper: chat.skipGatekeeper ?? false,
      },
    });
    return {
      clientMutationId: input.clientMutationId ?? null,
      errors: [],
      requestId: result.requestId,
      threadId: result.threadId === null ? null : toGlobalId('Ai::Conversation::Thread', result.threadId),
    };
  }
}
