import { Arg, Ctx, ID, Mutation, Query, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import type { Viewer } from '../auth/viewer';
import { assertCodeSuggestions } from '../auth/policies';
import { forbidden } from '../errors';
import type { GraphQLContext } from '../graphql/context';
import { requireViewer } from '../graphql/require-viewer';
import { Time } from '../graphql/scalars';
import type { CodeSuggestionUpdateEvent } from '../suggestions/sessions/session-update';
import { recordSuggestionFeedback } from '../suggestions/sessions/suggestion-feedback';
import { suggestionStats } from '../suggestions/sessions/suggestion-stats';
import {
  CodeSuggestionFeedbackInput,
  CodeSuggestionFeedbackPayload,
  CodeSuggestionSessionStartInput,
  CodeSuggestionSessionStartPayload,
  CodeSuggestionSessionUpdateInput,
  CodeSuggestionSessionUpdatePayload,
  CodeSuggestionStats,
  CodeSuggestionStatus,
  CodeSuggestionUpdate,
} from './code-suggestion-session.types';

/** As for the completions endpoint: signed in, an api or ai_features token, and a Duo seat. */
async function requireCodeSuggestions(context: GraphQLContext): Promise<Viewer> {
  const viewer = requireViewer(context);
  await assertCodeSuggestions(viewer, context.duoAccess, { scope: true });
  return viewer;
}

async function subscribe({ args, context }: SubscribeResolverData<unknown, { sessionId: string }, GraphQLContext>) {
  const viewer = await requireCodeSuggestions(context);
  return context.services.suggestionSessions.updates(viewer, args.sessionId);
}

@Resolver()
export class CodeSuggestionSessionResolver {
  @Mutation(() => CodeSuggestionSessionStartPayload, {
    description: 'Opens a continuous code suggestions session with the whole document.',
  })
  async codeSuggestionSessionStart(
    @Arg('input', () => CodeSuggestionSessionStartInput) input: CodeSuggestionSessionStartInput,
    @Ctx() context: GraphQLContext,
  ): Promise<CodeSuggestionSessionStartPayload> {
    const viewer = await requireCodeSuggestions(context);
    return context.services.suggestionSessions.start(viewer, {
      fileName: input.fileName,
      content: input.content,
      cursorOffset: input.cursorOffset,
      projectPath: input.projectPath ?? null,
    });
  }

  @Mutation(() => CodeSuggestionSessionUpdatePayload, {
    description: 'Sends the whole document as it is now; a burst of updates makes one generation with the newest.',
  })
  async codeSuggestionSessionUpdate(
    @Arg('input', () => CodeSuggestionSessionUpdateInput) input: CodeSuggestionSessionUpdateInput,
    @Ctx() context: GraphQLContext,
  ): Promise<CodeSuggestionSessionUpdatePayload> {
    const viewer = await requireCodeSuggestions(context);
    return context.services.suggestionSessions.update(viewer, {
      sessionId: input.sessionId,
      content: input.content,
      cursorOffset: input.cursorOffset,
      arrivedAt: context.receivedAt,
    });
  }

  @Mutation(() => CodeSuggestionFeedbackPayload, { description: 'Records what the user did with a code suggestion.' })
  async codeSuggestionFeedback(
    @Arg('input', () => CodeSuggestionFeedbackInput) input: CodeSuggestionFeedbackInput,
    @Ctx() context: GraphQLContext,
  ): Promise<CodeSuggestionFeedbackPayload> {
    const viewer = await requireCodeSuggestions(context);
    await recordSuggestionFeedback(context.services.prisma, {
      userId: viewer.user.id,
      sessionId: input.sessionId,
      suggestionId: input.suggestionId,
      event: input.event,
      finalText: input.finalText ?? null,
    });
    return { errors: [] };
  }

  @Query(() => CodeSuggestionStats, {
    description: 'Acceptance rates of continuous code suggestions per language and intent (admins only).',
  })
  async codeSuggestionStats(
    @Ctx() context: GraphQLContext,
    @Arg('from', () => Time, { nullable: true }) from?: Date | null,
    @Arg('to', () => Time, { nullable: true }) to?: Date | null,
  ): Promise<CodeSuggestionStats> {
    const viewer = requireViewer(context);
    if (!viewer.user.admin) throw forbidden('Only administrators can see code suggestion statistics');
    return suggestionStats(context.services.prisma, { from: from ?? null, to: to ?? null });
  }

  @Subscription(() => CodeSuggestionUpdate, {
    description: 'The latest suggestion of a continuous code suggestions session, each time it changes.',
    subscribe,
  })
  codeSuggestionUpdates(@Root() update: CodeSuggestionUpdateEvent, @Arg('sessionId', () => ID) _sessionId: string): CodeSuggestionUpdate {
    return { ...update, status: update.status as CodeSuggestionStatus };
  }
}
