import { Arg, Args, Ctx, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import { findReadableProject, groupAncestry } from '../auth/policies';
import type { Project } from '../db/prisma';
import type { GraphQLContext } from '../graphql/context';
import { parseGlobalId, toGlobalId } from '../graphql/global-id';
import { badInput } from '../errors';
import { connectionType, MAX_PAGE_SIZE, paginate } from './connection';
import { PageArguments } from './page-arguments';
import { namespaceWebUrl, projectWebUrl } from '../instance';
import { GroupType } from './group.types';
import { ProjectType } from './project.types';

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
  };
}

export const ProjectConnection = connectionType('Project', ProjectType, 'The connection type for Project.');

@Resolver(() => ProjectType)
export class ProjectResolver {
  @Query(() => ProjectConnection, { nullable: true, description: 'Find projects visible to the current user, by global ID (the language server asks which have Duo turned on).' })
  async projects(
    @Args(() => PageArguments) page: PageArguments,
    @Ctx() context: GraphQLContext,
    @Arg('ids', () => [ID], { nullable: true, description: 'Filter projects by IDs.' }) ids?: string[] | null,
  ) {
    if (!ids) throw badInput('projects needs ids: listing every project is not supported', 'ids');
    if (ids.length > MAX_PAGE_SIZE) throw badInput(`ids is too long (maximum is ${MAX_PAGE_SIZE})`, 'ids');
    const numeric = ids.map((id) => parseGlobalId(id)).flatMap((gid) => (gid?.model === 'Project' && /^\d{1,10}$/.test(gid.id) ? [Number(gid.id)] : []));
    const found = await Promise.all([...new Set(numeric)].map((id) => findReadableProject(context.services.prisma, context.viewer, { id })));
    const readable = found.filter((project): project is Project => project !== null).map(toProjectType);
    return paginate(readable, (project) => project.id, page);
  }

  @Query(() => ProjectType, { nullable: true, description: 'Find a project. Null when it does not exist or the user cannot read it.' })
  async project(@Arg('fullPath', () => ID, { description: 'Full path of the project. For example, `gitlab-org/gitlab-foss`.' }) fullPath: string, @Ctx() context: GraphQLContext): Promise<ProjectType | null> {
    const project = await findReadableProject(context.services.prisma, context.viewer, { fullPath });
    return project ? toProjectType(project) : null;
  }

  @FieldResolver(() => String, { description: 'Web URL of the project.' })
  webUrl(@Root() project: ProjectType, @Ctx() context: GraphQLContext): string {
    return projectWebUrl(context.services.externalUrl, project.fullPath);
  }

  @FieldResolver(() => GroupType, { nullable: true, description: 'Group of the project.' })
  async group(@Root() project: ProjectType, @Ctx() context: GraphQLContext): Promise<GroupType | null> {
    const ids = await groupAncestry(context.services.prisma, project.groupId);
    const found = await context.services.prisma.group.findMany({ where: { id: { in: ids } } });
    // groupAncestry lists the nearest group first; GitLab's full name starts at the top.
    const groups = ids.map((id) => found.find((each) => each.id === id)).filter((each) => each !== undefined).reverse();
    const group = groups.at(-1);
    if (!group) return null;
    return {
      id: toGlobalId('Group', group.id),
      name: group.name,
      fullPath: group.fullPath,
      fullName: groups.map((each) => each.name).join(' / '),
      webUrl: namespaceWebUrl(context.services.externalUrl, group.fullPath),
    };
  }
}
