import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import { findReadableProject } from '../auth/policies';
import type { Project } from '../db/prisma';
import type { GraphQLContext } from '../graphql/context';
import { toGlobalId } from '../global-id';
import { ProjectType } from './project.types';

export function toProjectType(project: Project): ProjectType {
  return {
    id: toGlobalId('Project', project.id),
    fullPath: project.fullPath,
    name: project.name,
    defaultBranch: project.defaultBranch,
    duoFeaturesEnabled: project.duoFeaturesEnabled,
    visibility: project.visibility,
  };
}

@Resolver(() => ProjectType)
export class ProjectResolver {
  @Query(() => ProjectType, { nullable: true, description: 'Find a project. Null when it does not exist or the user cannot read it.' })
  async project(@Arg('fullPath', () => ID, { description: 'Full path of the project. For example, `gitlab-org/gitlab-foss`.' }) fullPath: string, @Ctx() context: GraphQLContext): Promise<ProjectType | null> {
    const project = await findReadableProject(context.services.prisma, context.viewer, { fullPath });
    return project ? toProjectType(project) : null;
  }
}
