import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType('Project')
export class ProjectType {
  @Field(() => ID, { description: 'ID of the project.' })
  id!: string;

  @Field(() => ID, { description: 'Full path of the project.' })
  fullPath!: string;

  @Field({ description: 'Name of the project without the namespace.' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'Short description of the project.' })
  description!: string | null;

  @Field(() => String, { nullable: true, description: 'Default branch of the repository.' })
  defaultBranch!: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Indicates whether GitLab Duo features are enabled for the project.' })
  duoFeaturesEnabled!: boolean | null;

  @Field(() => String, { description: 'Visibility of the project: private, internal or public.' })
  visibility!: string;

  /** The namespace the project lives in (not a field: `group` resolves it). */
  groupId!: number;
}
