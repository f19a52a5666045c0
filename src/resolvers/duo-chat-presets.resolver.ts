import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import { contextPresets, QUESTION_COUNT } from '../chat/context-presets';
import { SLASH_COMMANDS } from '../chat/slash-commands';
import { badInput } from '../errors';
import type { GraphQLContext } from '../graphql/context';
import { numericId, type GlobalId } from '../global-id';
import { AiModelID, NamespaceID, ProjectID } from '../graphql/scalars';
import { AiChatContextPresets, AiSlashCommand } from './duo-chat-presets.types';

const URL_MAX = 2048;

function checkUrl(url: string | null | undefined): void {
  if (url && url.length > URL_MAX) throw badInput(`url is too long (maximum is ${URL_MAX} characters)`, 'url');
}

/** What web Duo Chat asks before the first message: suggested questions and the slash commands. */
@Resolver()
export class DuoChatPresetsResolver {
  @Query(() => AiChatContextPresets, {
    nullable: true,
    description: 'Get available GitLab Duo Chat context presets for the current user for a specific URL',
  })
  async aiChatContextPresets(
    @Ctx() context: GraphQLContext,
    @Arg('resourceId', () => AiModelID, { nullable: true, description: 'Global ID of the resource from the current page.' })
    resourceId?: GlobalId | null,
    @Arg('projectId', () => ProjectID, { nullable: true, description: 'Global ID of the project the user is acting on.' })
    projectId?: GlobalId | null,
    @Arg('namespaceId', () => NamespaceID, {
      nullable: true,
      description: 'Global ID of the namespace the user is acting on (web Duo Chat sends it; the questions do not depend on it here).',
    })
    _namespaceId?: GlobalId | null,
    @Arg('url', () => String, { nullable: true, description: 'URL of the page the user is currently on.' }) url?: string | null,
    @Arg('foundationalAgentReference', () => String, {
      nullable: true,
      description: 'Reference of the selected foundational chat agent. There are none here: any reference gets the default questions.',
    })
    foundationalAgentReference?: string | null,
    @Arg('questionCount', () => Int, { nullable: true, description: 'Number of questions for the default screen. Default 4, at most 10.' })
    questionCount?: number | null,
  ): Promise<AiChatContextPresets | null> {
    checkUrl(url);
    if (foundationalAgentReference && foundationalAgentReference.length > 255)
      throw badInput('foundationalAgentReference is too long (maximum is 255 characters)', 'foundationalAgentReference');
    if (questionCount !== null && questionCount !== undefined && (questionCount < 0 || questionCount > QUESTION_COUNT.max)) {
      throw badInput(`questionCount must be between 0 and ${QUESTION_COUNT.max}`, 'questionCount');
    }
    const viewer = context.viewer;
    if (!viewer || !(await context.duoAccess()).chatAvailable) return null;
    // A project page's resource is the project itself.
    const project = projectId ?? (resourceId?.model === 'Project' ? resourceId : null);
    const presets = await contextPresets({
      prisma: context.services.prisma,
      viewer,
      projectId: project ? numericId(project) : null,
      count: questionCount ?? QUESTION_COUNT.default,
    });
    return { questions: presets.questions, questionCategories: presets.categories, aiResourceData: null };
  }

  @Query(() => [AiSlashCommand], {
    nullable: true,
    description: 'Get available GitLab Duo Chat slash commands for the current user for a specific URL',
  })
  async aiSlashCommands(
    @Ctx() context: GraphQLContext,
    @Arg('url', () => String, { description: 'URL of the page the user is currently on.' }) url: string,
  ): Promise<AiSlashCommand[] | null> {
    checkUrl(url);
    if (!context.viewer || !(await context.duoAccess()).chatAvailable) return null;
    return SLASH_COMMANDS.map(({ name, description, shouldSubmit }) => ({ name, description, shouldSubmit }));
  }
}
