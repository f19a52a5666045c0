import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import { readableProjects } from '../namespaces/readable-projects';
import { findReadableProject, groupAncestry, projectPermissions } from '../auth/policies';
import type { Project } from '../db/prisma';
import type { GraphQLContext } from '../graphql/context';
import { numericId, parseGlobalId, toGlobalId } from '../global-id';
import { badInput } from '../errors';
import { connectionType, MAX_PAGE_SIZE, paginate } from './connection';
import { PageArguments } from './page-arguments';
import { namespaceWebUrl, projectPageUrl, webBaseUrl } from '../instance';
import { GroupType } from './group.types';
import { ProjectPermissionsType, ProjectType } from './project.types';

export function toProjectType(project: Project): ProjectType {
  return {
    id: toGlobalId('Project', project.id),
    fullPath: project.fullPath,
    name: project.name,
    // Projects here carry no description; GitLab answers null for a project without one too.
    description: null,
    defaultBranch: project.defaultBranch,
    duoFeaturesEnabled: project.duoFeaturesEnabled,
    visibility: project.visibility,
    groupId: project.groupId,
    gitlabWebUrl: project.webUrl,
  };
}

export const ProjectConnection = connectionType('Project', ProjectType, 'The connection type for Project.');

@ArgsType()
class ProjectsArguments extends PageArguments {
  @Field(() => [ID], { nullable: true, description: 'Filter projects by IDs.' })
  ids?: string[] | null;

  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Return only projects that the current user is a member of.' })
  membership?: boolean | null;

  @Field(() => String, { nullable: true, description: 'Search query, which can be for the project name, a path, or a description.' })
  search?: string | null;
}

@Resolver(() => ProjectType)
export class ProjectResolver {
  @Query(() => ProjectConnection, {
    nullable: true,
    description:
      'Find projects visible to the current user: by global ID (the language server asks which have Duo turned on), or listed ' +
      "(the chat page's picker), optionally only the user's and matching a search.",
  })
  async projects(@Args(() => ProjectsArguments) args: ProjectsArguments, @Ctx() context: GraphQLContext) {
    const { prisma } = context.services;
    if (args.ids) {
      if (args.ids.length > MAX_PAGE_SIZE) throw badInput(`ids is too long (maximum is ${MAX_PAGE_SIZE})`, 'ids');
      const numeric = args.ids
        .map((id) => parseGlobalId(id))
        .flatMap((gid) => {
          // An id no row can have (past int4) is a project that does not exist, not an error.
          const id = gid?.model === 'Project' ? numericId(gid) : null;
          return id === null ? [] : [id];
        });
      const found = await Promise.all([...new Set(numeric)].map((id) => findReadableProject(prisma, context.viewer, { id })));
      const readable = found.filter((project): project is Project => project !== null).map(toProjectType);
      return paginate(readable, (project) => project.id, args);
    }
    const projects = await readableProjects({ prisma, viewer: context.viewer, membership: args.membership ?? false, search: args.search });
    return paginate(projects.map(toProjectType), (project) => project.fullPath, args);
  }

  @Query(() => ProjectType, { nullable: true, description: 'Find a project. Null when it does not exist or the user cannot read it.' })
  async project(
    @Arg('fullPath', () => ID, { description: 'Full path of the project. For example, `gitlab-org/gitlab-foss`.' }) fullPath: string,
    @Ctx() context: GraphQLContext,
  ): Promise<ProjectType | null> {
    const project = await findReadableProject(context.services.prisma, context.viewer, { fullPath });
    return project ? toProjectType(project) : null;
  }

  @FieldResolver(() => String, { description: 'Web URL of the project.' })
  webUrl(@Root() project: ProjectType, @Ctx() context: GraphQLContext): string {
    const baseUrl = webBaseUrl(context.services.config.gitlab, context.services.externalUrl);
    return projectPageUrl(baseUrl, { fullPath: project.fullPath, webUrl: project.gitlabWebUrl });
  }

  @FieldResolver(() => ProjectPermissionsType, {
    description: 'Permissions for the current user on the resource. The language server asks for them for every workspace project.',
  })
  async userPermissions(@Root() project: ProjectType, @Ctx() context: GraphQLContext): Promise<ProjectPermissionsType> {
    const gid = parseGlobalId(project.id);
    const id = gid ? numericId(gid) : null;
    if (id === null) throw new Error(`not a project id: ${project.id}`);
    // toProjectType copied visibility from the row: it is one of the row's values.
    const visibility = project.visibility as Project['visibility'];
    return projectPermissions(context.services.prisma, context.viewer, { id, groupId: project.groupId, visibility });
  }

  @FieldResolver(() => GroupType, { nullable: true, description: 'Group of the project.' })
  async group(@Root() project: ProjectType, @Ctx() context: GraphQLContext): Promise<GroupType | null> {
    const ids = await groupAncestry(context.services.prisma, project.groupId);
    const found = await context.services.prisma.group.findMany({ where: { id: { in: ids } } });
    // groupAncestry lists the nearest group first; GitLab's full name starts at the top.
    const groups = ids
      .map((id) => found.find((each) => each.id === id))
      .filter((each) => each !== undefined)
      .reverse();
    const group = groups.at(-1);
    if (!group) return null;
    return {
      id: toGlobalId('Group', group.id),
      name: group.name,
      fullPath: group.fullPath,
      fullName: groups.map((each) => each.name).join(' / '),
      webUrl: namespaceWebUrl(webBaseUrl(context.services.config.gitlab, context.services.externalUrl), group.fullPath),
    };
  }
}
