import { Arg, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import type { CodeIndex } from '../db/prisma';
import type { GraphQLContext } from '../graphql/context';
import { numericId, parseGlobalId } from '../global-id';
import { requireViewer } from '../graphql/require-viewer';
import { findCodeIndex, requestCodeIndex } from '../indexing/code-index.service';
import { CodeIndexStateEnum, CodeIndexType, ProjectCodeIndexCreateInput, ProjectCodeIndexCreatePayload } from './code-index.types';
import { ProjectType } from './project.types';

function toCodeIndexType(index: CodeIndex): CodeIndexType {
  return {
    ref: index.ref,
    state: index.state as CodeIndexStateEnum,
    commitSha: index.commitSha,
    filesIndexed: index.filesIndexed,
    chunkCount: index.chunkCount,
    embeddedCount: index.embeddedCount,
    lastError: index.lastError,
    startedAt: index.startedAt,
    finishedAt: index.finishedAt,
  };
}

@Resolver(() => ProjectType)
export class CodeIndexResolver {
  @FieldResolver(() => CodeIndexType, { nullable: true, description: 'Code index of a branch, for repository context in Duo Chat. Null when the branch was never queued for indexing.' })
  async codeIndex(@Root() project: ProjectType, @Ctx() context: GraphQLContext, @Arg('ref', () => String, { nullable: true, description: "Branch. Default: the project's default branch." }) ref?: string | null): Promise<CodeIndexType | null> {
    const gid = parseGlobalId(project.id);
    const projectId = gid ? numericId(gid) : null;
    if (projectId === null) return null;
    const index = await findCodeIndex(context.services.prisma, { projectId, ref: ref?.trim() || project.defaultBranch || 'main' });
    return index ? toCodeIndexType(index) : null;
  }

  @Mutation(() => ProjectCodeIndexCreatePayload, { description: 'Starts indexing a branch of a project for Duo Chat, or rebuilds it with `force` (Maintainer role or higher).' })
  async projectCodeIndexCreate(@Arg('input', () => ProjectCodeIndexCreateInput) input: ProjectCodeIndexCreateInput, @Ctx() context: GraphQLContext): Promise<ProjectCodeIndexCreatePayload> {
    const viewer = requireViewer(context);
    const { index, jobId } = await requestCodeIndex({ prisma: context.services.prisma, queues: context.services.queues, viewer, projectPath: input.projectPath, ref: input.ref, force: input.force ?? false });
    return { codeIndex: toCodeIndexType(index), jobId, clientMutationId: input.clientMutationId ?? null, errors: [] };
  }
}
