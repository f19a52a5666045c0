import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { recordFeedback } from '../chat/feedback.service';
import type { GraphQLContext } from '../graphql/context';
import { requireViewer } from '../graphql/require-viewer';
import { DuoUserFeedbackInput, DuoUserFeedbackPayload } from './feedback.types';

@Resolver()
export class FeedbackResolver {
  @Mutation(() => DuoUserFeedbackPayload, { nullable: true, description: 'Add user feedback to an AI chat message.' })
  async duoUserFeedback(
    @Arg('input', () => DuoUserFeedbackInput) input: DuoUserFeedbackInput,
    @Ctx() context: GraphQLContext,
  ): Promise<DuoUserFeedbackPayload> {
    const viewer = requireViewer(context);
    await recordFeedback(context.services.prisma, {
      userId: viewer.user.id,
      messageId: input.aiMessageId,
      trackingEvent: input.trackingEvent ?? null,
    });
    return { clientMutationId: input.clientMutationId ?? null, errors: [] };
  }
}
