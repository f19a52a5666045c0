import { Arg, Ctx, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import { findReadableProject } from '../auth/policies';
import type { Project } from '../db/prisma';
import type { GraphQLContext } from '../graphql/context';
import { toGlobalId } from '../graphql/global-id';
import { namespaceWebUrl, projectWebUrl } from '../instance';
import { findGroupWithAncestors } from '../namespaces/namespaces.service';
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

@Resolver(() => ProjectType)
export class ProjectResolver {
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
    const groups = await findGroupWithAncestors(context.services.prisma, project.groupId);
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
