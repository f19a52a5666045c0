import { Arg, Ctx, Field, Float, ObjectType, Query, Resolver } from 'type-graphql';
import { assertDuoChat } from '../auth/policies';
import type { GraphQLContext } from '../graphql/context';
import { requireViewer } from '../graphql/require-viewer';
import { CHAT_CONTENT_LIMIT } from '../chat/submit-chat';
import { requireMaxLength } from '../validation';
import { AiGatekeeperDecision } from './ai-message.types';
import { checkPromptFor } from '../chat/check-prompt';
import type { GlobalId } from '../global-id';
import { AiConversationThreadID } from '../graphql/scalars';

@ObjectType('AiIntentAlternative', { description: 'Another intent the prompt may have, with its confidence.' })
class AiIntentAlternative {
  @Field()
  intent!: string;

  @Field(() => Float)
  confidence!: number;
}

@ObjectType('AiChatPromptCheck', { description: "The chat gatekeeper's verdict on a prompt." })
class AiChatPromptCheck extends AiGatekeeperDecision {
  @Field(() => [AiIntentAlternative], { description: 'Next most likely intents.' })
  alternatives!: AiIntentAlternative[];
}

@Resolver()
export class PromptCheckResolver {
  @Query(() => AiChatPromptCheck, {
    nullable: true,
    description:
      "Checks a chat prompt's clarity and intents as the gatekeeper would, so an IDE can warn while the user types. Null when the " +
      'gatekeeper is turned off.',
  })
  async aiChatPromptCheck(
    @Arg('content', () => String) content: string,
    @Ctx() context: GraphQLContext,
    @Arg('threadId', () => AiConversationThreadID, {
      nullable: true,
      description:
        'Global ID of a thread of the current user: the prompt is checked as the next message of that conversation (a follow-up ' +
        'such as "why?" is clear after a question). Without it, as the first message of a new conversation.',
    })
    threadId?: GlobalId | null,
  ): Promise<AiChatPromptCheck | null> {
    const viewer = requireViewer(context);
    assertDuoChat(await context.duoAccess());
    // The limit aiAction's content has.
    requireMaxLength(content, 'content', CHAT_CONTENT_LIMIT);
    const verdict = await checkPromptFor({
      prisma: context.services.prisma,
      check: context.services.gatekeeper,
      content,
      userId: viewer.user.id,
      threadId: threadId ?? null,
    });
    if (!verdict) return null;
    return {
      status: verdict.status,
      intent: verdict.intent,
      confidence: verdict.confidence,
      intents: verdict.intents.map((part) => part.intent),
      alternatives: verdict.alternatives,
    };
  }
}
