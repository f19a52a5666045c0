import { Field, ObjectType } from 'type-graphql';

@ObjectType('GitlabInstanceFeatureFlag', { description: 'A feature flag for the GitLab instance.' })
export class GitlabInstanceFeatureFlag {
  @Field({ description: 'Indicates whether the GitLab instance feature flag is enabled or not.' })
  enabled!: boolean;

  @Field({ description: 'Name of the GitLab instance feature flag.' })
  name!: string;
}

@ObjectType('Kas', { description: 'Information about the GitLab agent server for Kubernetes.' })
export class Kas {
  @Field({ description: 'Indicates whether the agent server for Kubernetes is enabled.' })
  enabled!: boolean;

  @Field(() => String, { nullable: true, description: 'URL used by the agents to communicate with the server.' })
  externalUrl!: string | null;

  @Field(() => String, { nullable: true, description: 'KAS version.' })
  version!: string | null;
}

@ObjectType('Metadata', { description: 'Metadata about GitLab.' })
export class Metadata {
  @Field({ description: 'Version.' })
  version!: string;

  @Field({ description: 'Revision.' })
  revision!: string;

  @Field({ description: 'Enterprise edition.' })
  enterprise!: boolean;

  @Field(() => Kas, { description: 'Metadata about KAS.' })
  kas!: Kas;
}
