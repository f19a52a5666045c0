import { Field, ObjectType } from 'type-graphql';

@ObjectType('AiChatContextPresets', { description: 'Presets for GitLab Duo Chat window based on current context' })
export class AiChatContextPresets {
  @Field(() => [String], { nullable: true, description: 'Array of questions that the user can ask GitLab Duo Chat from the current page.' })
  questions!: string[] | null;

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
