import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType('Group')
export class GroupType {
  @Field(() => ID, { description: 'ID of the namespace.' })
  id!: string;

  @Field({ description: 'Name of the namespace.' })
  name!: string;

  @Field(() => ID, { description: 'Full path of the namespace.' })
  fullPath!: string;

  @Field({ description: 'Full name of the namespace.' })
  fullName!: string;

  @Field({ description: 'Web URL of the group.' })
  webUrl!: string;
}
