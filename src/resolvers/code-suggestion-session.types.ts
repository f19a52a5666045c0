import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum CodeSuggestionStatus {
  STREAMING = 'STREAMING',
  COMPLETE = 'COMPLETE',
  SUPERSEDED = 'SUPERSEDED',
  EMPTY = 'EMPTY',
}
registerEnumType(CodeSuggestionStatus, {
  name: 'CodeSuggestionStatus',
  description: 'How a continuous code suggestion stands.',
  valuesConfig: {
    STREAMING: { description: 'Being generated: the text so far.' },
    COMPLETE: { description: 'Finished: the whole suggestion.' },
    SUPERSEDED: { description: 'A newer update replaced it: remove it; nothing more of it follows.' },
    EMPTY: { description: 'Nothing good enough: remove what is shown.' },
  },
});

export enum CodeSuggestionFeedbackEvent {
  ACCEPTED = 'ACCEPTED',
  REJECTED = 'REJECTED',
  EXECUTED = 'EXECUTED',
}
registerEnumType(CodeSuggestionFeedbackEvent, {
  name: 'CodeSuggestionFeedbackEvent',
  description: 'What the user did with a code suggestion.',
});

@InputType('CodeSuggestionSessionStartInput')
export class CodeSuggestionSessionStartInput {
  @Field({ description: 'Name or path of the file; its extension picks the language.' })
  fileName!: string;

  @Field({ description: 'The whole document.' })
  content!: string;

  @Field(() => Int, { description: 'The cursor as an offset into content (UTF-16 code units).' })
  cursorOffset!: number;

  @Field(() => String, { nullable: true, description: 'Full path of the project the file belongs to.' })
  projectPath?: string | null;
}

@ObjectType('CodeSuggestionSessionStartPayload')
export class CodeSuggestionSessionStartPayload {
  @Field(() => ID, { description: 'Subscribe to codeSuggestionUpdates with it, then send updates.' })
  sessionId!: string;
}

@InputType('CodeSuggestionSessionUpdateInput')
export class CodeSuggestionSessionUpdateInput {
  @Field(() => ID)
  sessionId!: string;

  @Field({ description: 'The whole document as it is now (not a delta).' })
  content!: string;

  @Field(() => Int, { description: 'The cursor as an offset into content (UTF-16 code units).' })
  cursorOffset!: number;
}

@ObjectType('CodeSuggestionSessionUpdatePayload')
export class CodeSuggestionSessionUpdatePayload {
  @Field(() => ID)
  sessionId!: string;

  @Field(() => Int, { description: 'The revision this update became; suggestions made for it carry it.' })
  revision!: number;
}

@ObjectType('CodeSuggestionUpdate', { description: 'The latest suggestion of a session: always a complete copy, never a delta.' })
export class CodeSuggestionUpdate {
  @Field(() => ID)
  sessionId!: string;

  @Field(() => ID, { description: 'One per generation; feedback names it.' })
  suggestionId!: string;

  @Field(() => Int, { description: 'The session revision the suggestion was made for.' })
  revision!: number;

  @Field(() => String, { nullable: true, description: '`completion` or `generation`; null on SUPERSEDED.' })
  intent!: string | null;

  @Field(() => String, { nullable: true, description: '`comment`, `small_file` or `empty_function` for generations.' })
  generationType!: string | null;

  @Field({ description: 'The whole suggestion so far; empty on SUPERSEDED and EMPTY.' })
  text!: string;

  @Field(() => CodeSuggestionStatus)
  status!: CodeSuggestionStatus;

  @Field(() => String, {
    nullable: true,
    description:
      'Why an EMPTY update holds no suggestion: `no_model` (no language model is configured), ' +
      '`failed` (the model or the generation failed; logged), `nothing` (the model had nothing to add), `rate_limited` (the ' +
      "user's code suggestions budget is spent: none was started); null otherwise.",
  })
  reason!: string | null;
}

@InputType('CodeSuggestionFeedbackInput')
export class CodeSuggestionFeedbackInput {
  @Field(() => ID)
  sessionId!: string;

  @Field(() => ID)
  suggestionId!: string;

  @Field(() => CodeSuggestionFeedbackEvent)
  event!: CodeSuggestionFeedbackEvent;

  @Field(() => String, { nullable: true, description: 'For a rejection, what the user wrote instead.' })
  finalText?: string | null;
}

@ObjectType('CodeSuggestionFeedbackPayload')
export class CodeSuggestionFeedbackPayload {
  @Field(() => [String], { description: 'Errors encountered during the mutation.' })
  errors!: string[];
}

@ObjectType('CodeSuggestionAcceptanceRate', { description: 'Acceptance of the completed suggestions of one language or intent.' })
export class CodeSuggestionAcceptanceRate {
  @Field({ description: 'The language or the intent.' })
  key!: string;

  @Field(() => Int, { description: 'Completed suggestions.' })
  shown!: number;

  @Field(() => Int)
  accepted!: number;

  @Field(() => Int)
  rejected!: number;

  @Field(() => Float, { description: 'accepted / shown (0 when none).' })
  rate!: number;
}

@ObjectType('CodeSuggestionStats')
export class CodeSuggestionStats {
  @Field(() => [CodeSuggestionAcceptanceRate])
  byLanguage!: CodeSuggestionAcceptanceRate[];

  @Field(() => [CodeSuggestionAcceptanceRate])
  byIntent!: CodeSuggestionAcceptanceRate[];
}
