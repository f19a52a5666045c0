import { Arg, Ctx, Field, ObjectType, Query, Resolver } from 'type-graphql';
import { badInput } from '../errors';
import { assertCodeSuggestions } from '../auth/policies';
import type { GraphQLContext } from '../graphql/context';
import { requireViewer } from '../graphql/require-viewer';
import { COMPLETION_LIMITS } from '../suggestions/completion-request';

@ObjectType('CodeSuggestionIntent', { description: 'What the server-side detection decides for a code suggestion at the cursor.' })
class CodeSuggestionIntent {
  @Field({ description: '`completion` or `generation`.' })
  intent!: string;

  @Field(() => String, { nullable: true, description: '`comment`, `small_file` or `empty_function`; null for completions.' })
  generationType!: string | null;

  @Field(() => String, { nullable: true, description: 'The comment above the cursor, for comment generations; otherwise null.' })
  userInstruction!: string | null;

  @Field(() => String, { nullable: true, description: 'The language detected from the file name, or null.' })
  language!: string | null;
}

@Resolver()
export class CodeSuggestionIntentResolver {
  @Query(() => CodeSuggestionIntent, {
    description: 'Runs the code suggestions intent detection on a file and cursor, as the completions endpoint does.',
  })
  async codeSuggestionIntent(
    @Arg('fileName', () => String) fileName: string,
    @Arg('contentAboveCursor', () => String) contentAboveCursor: string,
    @Ctx() context: GraphQLContext,
    @Arg('contentBelowCursor', () => String, { nullable: true }) contentBelowCursor?: string | null,
  ): Promise<CodeSuggestionIntent> {
    // A read: any token scope may ask, as for other queries.
    const viewer = requireViewer(context);
    await assertCodeSuggestions(viewer, context.duoAccess, { scope: false });
    if (fileName.length > COMPLETION_LIMITS.fileName)
      throw badInput(`fileName is too long (maximum is ${COMPLETION_LIMITS.fileName} characters)`, 'fileName');
    for (const [field, value] of [
      ['contentAboveCursor', contentAboveCursor],
      ['contentBelowCursor', contentBelowCursor ?? ''],
    ] as const) {
      if (value.length > COMPLETION_LIMITS.content)
        throw badInput(`${field} is too long (maximum is ${COMPLETION_LIMITS.content} characters)`, field);
    }
    const decision = await context.services.intent.detect(
      { fileName, contentAboveCursor, contentBelowCursor: contentBelowCursor ?? '' },
      viewer.user.id,
    );
    return {
      intent: decision.intent,
      generationType: decision.generationType,
      userInstruction: decision.userInstruction,
      language: decision.language,
    };
  }
}
