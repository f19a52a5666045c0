import { Field, ObjectType } from 'type-graphql';
import { UserID } from '../graphql/scalars';

@ObjectType('CurrentUser', { description: 'The currently authenticated GitLab user.' })
export class CurrentUser {
  @Field(() => UserID, { description: 'Global ID of the user.' })
  id!: string;

  @Field({ description: 'Username of the user. Unique within the instance of GitLab.' })
  username!: string;

  @Field({ description: 'Human-readable name of the user.' })
  name!: string;

  @Field(() => String, { nullable: true, description: "URL of the user's avatar." })
  avatarUrl!: string | null;

  @Field({ description: 'Web URL of the user.' })
  webUrl!: string;
}

@ObjectType('Ide', { description: 'IDE settings and feature flags.' })
export class IdeType {
  @Field({ description: 'Indicates whether AI assisted code suggestions are enabled.' })
  codeSuggestionsEnabled!: boolean;
}
