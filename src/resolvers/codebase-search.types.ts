import { Field, Float, Int, ObjectType } from 'type-graphql';

@ObjectType('CodebaseSearchHit', { description: 'A piece of code found by codebase search: one or more merged chunks of one file.' })
export class CodebaseSearchHitType {
  @Field({ description: 'Path of the file in the repository.' })
  path!: string;

  @Field(() => Int, { description: 'First line (1-based).' })
  startLine!: number;

  @Field(() => Int, { description: 'Last line (inclusive).' })
  endLine!: number;

  @Field({ description: 'The code of those lines.' })
  content!: string;

  @Field(() => Float, { description: 'Relevance from 0 to 1 (fused rank of vector and full-text search).' })
  score!: number;

  @Field(() => String, { nullable: true, description: 'Language of the file.' })
  language!: string | null;

  @Field(() => String, { nullable: true, description: 'Qualified name of the function, method or class, when the chunk is one.' })
  symbol!: string | null;

  @Field({ description: 'Git blob id of the file.' })
  blobId!: string;
}
