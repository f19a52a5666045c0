import { Field, ObjectType } from 'type-graphql';

@ObjectType('AiChatQuestionCategory', { description: 'Category of suggested questions for GitLab Duo Chat' })
export class AiChatQuestionCategory {
  @Field({
    description:
      'Stable identifier of the category. The type of the current resource for contextual categories (`project`), and the topic ' +
      'for static ones, for example `code`.',
  })
  key!: string;

  @Field({ description: 'Display title of the category, for example the reference of the current resource.' })
  title!: string;

  @Field({
    description:
      'Whether the questions are about the resource on the current page. At most one category is contextual, and it is returned first.',
  })
  contextual!: boolean;

  @Field(() => [String], { description: 'Suggested questions in the category.' })
  questions!: string[];
}

@ObjectType('ContextPreset', { description: 'Presets for GitLab Duo Chat window based on current context' })
export class AiChatContextPresets {
  @Field(() => [String], { nullable: true, description: 'Array of questions that the user can ask GitLab Duo Chat from the current page.' })
  questions!: string[] | null;

  @Field(() => [AiChatQuestionCategory], {
    nullable: true,
    description: 'Suggested questions grouped by category. Not affected by questionCount.',
  })
  questionCategories!: AiChatQuestionCategory[] | null;

  @Field(() => String, { nullable: true, description: 'Serialized representation of the AI resource in the current context.' })
  aiResourceData!: string | null;
}

@ObjectType('AiSlashCommand', { description: 'Duo Chat slash command' })
export class AiSlashCommand {
  @Field({ description: 'Name of the slash command.' })
  name!: string;

  @Field({ description: 'Description of what the slash command does.' })
  description!: string;

  @Field({ description: 'Indicates whether the command should be submitted automatically when clicked.' })
  shouldSubmit!: boolean;
}
