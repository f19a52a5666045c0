import { Ctx, FieldResolver, Query, Resolver } from 'type-graphql';
import { chatFeatureNames, codeSuggestionsContextNames } from '../auth/duo-access';
import type { GraphQLContext } from '../graphql/context';
import { toGlobalId } from '../global-id';
import { userAvatarUrl, userWebUrl, webBaseUrl } from '../instance';
import { CurrentUser, IdeType } from './user.types';

@Resolver(() => CurrentUser)
export class CurrentUserResolver {
  @Query(() => CurrentUser, { nullable: true, description: 'Get information about current user.' })
  currentUser(@Ctx() context: GraphQLContext): CurrentUser | null {
    if (!context.viewer) return null;
    const { user } = context.viewer;
    const { externalUrl } = context.services;
    return {
      id: toGlobalId('User', user.id),
      username: user.username,
      name: user.name,
      avatarUrl: userAvatarUrl(externalUrl, user.id),
      webUrl: userWebUrl(webBaseUrl(context.services.config.gitlab, externalUrl), user.username),
    };
  }

  @FieldResolver(() => Boolean, { nullable: true, description: 'User access to AI chat feature.' })
  async duoChatAvailable(@Ctx() context: GraphQLContext): Promise<boolean> {
    return (await context.duoAccess()).chatAvailable;
  }

  @FieldResolver(() => Boolean, { nullable: true, description: 'User access to code suggestions feature.' })
  async duoCodeSuggestionsAvailable(@Ctx() context: GraphQLContext): Promise<boolean> {
    return (await context.duoAccess()).codeSuggestionsAvailable;
  }

  @FieldResolver(() => [String], { description: 'List of available features for AI chat.' })
  async duoChatAvailableFeatures(@Ctx() context: GraphQLContext): Promise<string[]> {
    return chatFeatureNames(await context.duoAccess());
  }

  @FieldResolver(() => [String], { description: 'List of additional contexts enabled for Code Suggestions.' })
  async codeSuggestionsContexts(@Ctx() context: GraphQLContext): Promise<string[]> {
    return codeSuggestionsContextNames(await context.duoAccess(), context.services.config.featureFlags);
  }

  @FieldResolver(() => IdeType, {
    nullable: true,
    description: "IDE settings (the VS Code extension's code suggestions probe reads `codeSuggestionsEnabled`).",
  })
  async ide(@Ctx() context: GraphQLContext): Promise<IdeType> {
    // GitLab's Ide type: can the user access code suggestions, the same answer as duoCodeSuggestionsAvailable.
    return { codeSuggestionsEnabled: (await context.duoAccess()).codeSuggestionsAvailable };
  }
}
