import { ArgsType, Field, Int } from 'type-graphql';

/** Relay's four pagination arguments, as every GitLab connection field takes them. */
@ArgsType()
export class PageArguments {
  @Field(() => String, { nullable: true, description: 'Returns the elements in the list that come after the specified cursor.' })
  after?: string | null;

  @Field(() => String, { nullable: true, description: 'Returns the elements in the list that come before the specified cursor.' })
  before?: string | null;

  @Field(() => Int, { nullable: true, description: 'Returns the first _n_ elements from the list.' })
  first?: number | null;

  @Field(() => Int, { nullable: true, description: 'Returns the last _n_ elements from the list.' })
  last?: number | null;
}
