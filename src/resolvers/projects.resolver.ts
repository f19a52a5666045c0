import { Args, ArgsType, Ctx, Field, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../graphql/context';
import { readableProjects } from '../namespaces/readable-projects';
import { connectionType, paginate, type ConnectionShape } from './connection';
import { PageArguments } from './page-arguments';
import { toProjectType } from './project.resolver';
import { ProjectType } from './project.types';

const ProjectConnection = connectionType('Project', ProjectType, 'The connection type for Project.');

@ArgsType()
class ProjectsArguments extends PageArguments {
  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Return only projects that the current user is a member of.' })
  membership?: boolean | null;

  @Field(() => String, { nullable: true, description: 'Search query, which can be for the project name, a path, or a description.' })
  search?: string | null;
}

@Resolver(() => ProjectType)
export class ProjectsResolver {
  @Query(() => ProjectConnection, { nullable: true, description: 'Find projects visible to the current user.' })
  async projects(@Args(() => ProjectsArguments) args: ProjectsArguments, @Ctx() context: GraphQLContext): Promise<ConnectionShape<ProjectType>> {
    const projects = await readableProjects({ prisma: context.services.prisma, viewer: context.viewer, membership: args.membership ?? false, search: args.search });
    return paginate(projects.map(toProjectType), (project) => project.fullPath, args);
  }
}
