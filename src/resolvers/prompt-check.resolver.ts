import { Arg, Ctx, Field, Float, ObjectType, Query, Resolver } from 'type-graphql';
import { assertDuoChat } from '../auth/policies';
import type { GraphQLContext } from '../graphql/context';
import { requireViewer } from '../graphql/require-viewer';
import { CHAT_CONTENT_LIMIT } from '../chat/submit-chat';
import { requireMaxLength } from '../validation';
import { AiGatekeeperDecision } from './ai-message.types';

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
  ): Promise<AiChatPromptCheck | null> {
    requireViewer(context);
    assertDuoChat(await context.duoAccess());
    // The limit aiAction's content has.
    requireMaxLength(content, 'content', CHAT_CONTENT_LIMIT);
    const check = context.services.gatekeeper;
    if (!check) return null;
    const verdict = check(content);
    return {
      status: verdict.status,
      intent: verdict.intent,
      confidence: verdict.confidence,
      intents: verdict.intents.map((part) => part.intent),
      alternatives: verdict.alternatives,
    };
  }
}
