import { JSONResolver } from 'graphql-scalars';
import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { AiAgentVersionID, AiConversationThreadID, Time } from '../graphql/scalars';
import { AiAdditionalContextCategory, AiMessageRole, AiMessageType } from './chat.enums';

@ObjectType('AiAdditionalContext', { description: 'Additional context for AI message.' })
export class AiAdditionalContext {
  @Field(() => AiAdditionalContextCategory, { description: 'Category of the additional context.' })
  category!: AiAdditionalContextCategory;

  @Field({ description: 'Content of the additional context.' })
  content!: string;

  @Field(() => ID, { description: 'ID of the additional context.' })
  id!: string;

  @Field(() => JSONResolver, { nullable: true, description: 'Metadata of the additional context.' })
  metadata!: unknown;
}

@ObjectType('AiContextItem', { description: 'A context item a message used (the AiContextItem contract).' })
export class AiContextItem {
  @Field(() => ID, { description: 'Unique ID of the item, e.g. a file URI.' })
  id!: string;

  @Field({ description: 'Contract version of the item.' })
  schemaVersion!: string;

  @Field(() => AiAdditionalContextCategory, { description: 'Category of the item.' })
  category!: AiAdditionalContextCategory;

  @Field(() => String, { nullable: true, description: 'Exact type of the item, e.g. open_tabs.' })
  type!: string | null;

  @Field({ description: 'Whether the item was enabled (only enabled items are accepted).' })
  isEnabled!: boolean;

  @Field(() => [String], { description: 'Why the item is disabled, most important first.' })
  disabledReasons!: string[];

  @Field(() => JSONResolver, { nullable: true, description: 'Free-form metadata of the item.' })
  metadata!: unknown;
}

@ObjectType('AiGatekeeperDecision', { description: 'What the chat gatekeeper decided about the prompt a message answers.' })
export class AiGatekeeperDecision {
  @Field({ description: 'CLEAR, NEEDS_CONFIRMATION, NEEDS_CLARIFICATION or MULTI_INTENT.' })
  status!: string;

  @Field(() => String, {
    nullable: true,
    description:
      'The most likely intent, e.g. EXPLAIN_CODE; CONVERSATION for a greeting, thanks, a farewell or a question about the assistant. ' +
      'Null when nothing is to be done yet, or for a CLEAR prompt the gatekeeper could not read (another language).',
  })
  intent!: string | null;

  @Field(() => Float, { description: 'Confidence of the intent, 0 to 1.' })
  confidence!: number;

  @Field(() => [String], { description: 'The intents found, for MULTI_INTENT.' })
  intents!: string[];
}

@ObjectType('AiMessageExtras', { description: 'Extra metadata for AI message.' })
export class AiMessageExtras {
  @Field(() => [AiAdditionalContext], { nullable: true, description: 'Additional context for the message.' })
  additionalContext!: AiAdditionalContext[] | null;

  @Field(() => Boolean, { nullable: true, description: 'Whether the user has provided feedback for the mesage.' })
  hasFeedback!: boolean | null;

  @Field(() => [JSONResolver], { nullable: true, description: 'Sources used to form the message.' })
  sources!: unknown[] | null;

  @Field(() => [String], { nullable: true, description: 'IDs of the context items the message used.' })
  contextItemIds!: string[] | null;

  @Field(() => AiGatekeeperDecision, { nullable: true, description: 'What the gatekeeper decided, when it answered instead of the model.' })
  gatekeeper!: AiGatekeeperDecision | null;
}

@ObjectType('AiMessage', { description: 'AI features communication message' })
export class AiMessage {
  @Field(() => ID, { nullable: true, description: 'UUID of the message.' })
  id!: string | null;

  @Field(() => String, { nullable: true, description: 'UUID of the original request. Shared between chunks of the same response.' })
  requestId!: string | null;

  @Field(() => String, { nullable: true, description: 'Raw response content.' })
  content!: string | null;

  @Field(() => String, { nullable: true, description: 'Response content as HTML.' })
  contentHtml!: string | null;

  @Field(() => AiMessageRole, { description: 'Message owner role.' })
  role!: AiMessageRole;

  @Field(() => Time, { description: 'Message creation timestamp.' })
  timestamp!: Date;

  @Field(() => AiMessageType, { nullable: true, description: 'Message type.' })
  type!: AiMessageType | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Incremental ID for a chunk from a streamed message. Null when it is not a streamed message.',
  })
  chunkId!: number | null;

  @Field(() => [String], { nullable: true, description: 'Message errors.' })
  errors!: string[] | null;

  @Field(() => String, { nullable: true, description: 'Error code of the message, e.g. A1000, when the answer failed.' })
  errorCode!: string | null;

  @Field(() => AiMessageExtras, { nullable: true, description: 'Extra message metadata.' })
  extras!: AiMessageExtras | null;

  @Field(() => AiAgentVersionID, { nullable: true, description: 'Global ID of the agent version to answer the message.' })
  agentVersionId!: string | null;

  @Field(() => AiConversationThreadID, { nullable: true, description: 'Global ID of the existing thread for the Chat conversation.' })
  threadId!: string | null;

  @Field(() => [AiContextItem], { nullable: true, description: 'Context items the message used (the AiContextItem contract).' })
  contextItems!: AiContextItem[] | null;
}
