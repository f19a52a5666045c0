import { Arg, Ctx, FieldResolver, Query, Resolver } from 'type-graphql';
import { badInput } from '../errors';
import type { GraphQLContext } from '../graphql/context';
import { FEATURE_FLAG_LIMITS, GITLAB_VERSION, isFeatureFlagEnabled } from '../instance';
import { GitlabInstanceFeatureFlag, Metadata } from './metadata.types';

@Resolver(() => Metadata)
export class MetadataResolver {
  @Query(() => Metadata, { nullable: true, description: 'Metadata about GitLab. Null without a signed-in user, as in GitLab.' })
  metadata(@Ctx() context: GraphQLContext): Metadata | null {
    if (!context.viewer) return null;
    return {
      version: GITLAB_VERSION,
      revision: context.services.revision,
      enterprise: true,
      kas: { enabled: false, externalUrl: null, version: null },
    };
  }

  @Query(() => Boolean, {
    description: 'Check if a feature flag is enabled. Deprecated in GitLab 17.4: Replaced with metadata.featureFlags.',
    deprecationReason: 'Replaced with metadata.featureFlags. Deprecated in GitLab 17.4.',
  })
  featureFlagEnabled(
    @Ctx() context: GraphQLContext,
    @Arg('name', () => String, { description: 'Name of the feature flag.' }) name: string,
  ): boolean {
    // Language servers up to 7.9.0 still ask this, one flag at a time; as GitLab, false without a signed-in user.
    if (!context.viewer) return false;
    return isFeatureFlagEnabled(context.services.config.featureFlags, name);
  }

  @FieldResolver(() => [GitlabInstanceFeatureFlag], {
    description: 'Feature flags for the GitLab instance: the ones the configuration turns on are enabled, every other name is not.',
  })
  featureFlags(
    @Ctx() context: GraphQLContext,
    @Arg('names', () => [String], { description: 'Names of the feature flags.' }) names: string[],
  ): GitlabInstanceFeatureFlag[] {
    if (names.length > FEATURE_FLAG_LIMITS.names)
      throw badInput(`names is too long (maximum is ${FEATURE_FLAG_LIMITS.names} names)`, 'names');
    const tooLong = names.findIndex((name) => name.length > FEATURE_FLAG_LIMITS.nameLength);
    if (tooLong >= 0)
      throw badInput(`names[${tooLong}] is too long (maximum is ${FEATURE_FLAG_LIMITS.nameLength} characters)`, `names[${tooLong}]`);
    return [...new Set(names)].map((name) => ({ name, enabled: isFeatureFlagEnabled(context.services.config.featureFlags, name) }));
  }
}
