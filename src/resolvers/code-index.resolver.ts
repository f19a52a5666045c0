import { Arg, Ctx, FieldResolver, Int, Mutation, Resolver, Root } from 'type-graphql';
import { findCodeReadableProject } from '../auth/policies';
import { resolveDuoAccess } from '../auth/duo-access';
import { listIndexedDirectories } from '../search/code-browse.service';
import type { CodeIndex } from '../db/prisma';
import { badInput, withoutServerPaths } from '../errors';
import type { GraphQLContext } from '../graphql/context';
import { numericId, parseGlobalId } from '../global-id';
import { requireViewer } from '../graphql/require-viewer';
import { findCodeIndex, requestCodeIndex } from '../indexing/code-index.service';
import { MAX_PAGE_SIZE } from './connection';
import { CodeIndexStateEnum, CodeIndexType, ProjectCodeIndexCreateInput, ProjectCodeIndexCreatePayload } from './code-index.types';
import { ProjectType } from './project.types';

function toCodeIndexType(index: CodeIndex): CodeIndexType {
  return {
    ref: index.ref,
    state: index.state as CodeIndexStateEnum,
    commitSha: index.commitSha,
    filesIndexed: index.filesIndexed,
    filesTotal: index.filesTotal,
    chunkCount: index.chunkCount,
    embeddedCount: index.embeddedCount,
    // Rows written before paths were kept out of messages may still hold one.
    lastError: index.lastError === null ? null : withoutServerPaths(index.lastError),
    startedAt: index.startedAt,
    finishedAt: index.finishedAt,
    projectId: index.projectId,
  };
}

@Resolver(() => ProjectType)
export class CodeIndexResolver {
  @FieldResolver(() => CodeIndexType, {
    nullable: true,
    description: 'Code index of a branch, for repository context in Duo Chat. Null when the branch was never queued for indexing.',
  })
  async codeIndex(
    @Root() project: ProjectType,
    @Ctx() context: GraphQLContext,
    @Arg('ref', () => String, { nullable: true, description: "Branch. Default: the project's default branch." }) ref?: string | null,
  ): Promise<CodeIndexType | null> {
    const gid = parseGlobalId(project.id);
    const projectId = gid ? numericId(gid) : null;
    if (projectId === null) return null;
    // The commit indexed and the index's errors are about the code: read_code (Reporter+ on private projects).
    if (!(await findCodeReadableProject(context.services.prisma, context.viewer, { id: projectId }))) return null;
    const index = await findCodeIndex(context.services.prisma, { projectId, ref: ref?.trim() || project.defaultBranch || 'main' });
    return index ? toCodeIndexType(index) : null;
  }

  @Mutation(() => ProjectCodeIndexCreatePayload, {
    description: 'Starts indexing a branch of a project for Duo Chat, or rebuilds it with `force` (Maintainer role or higher).',
  })
  async projectCodeIndexCreate(
    @Arg('input', () => ProjectCodeIndexCreateInput) input: ProjectCodeIndexCreateInput,
    @Ctx() context: GraphQLContext,
  ): Promise<ProjectCodeIndexCreatePayload> {
    const viewer = requireViewer(context);
    const { index, jobId } = await requestCodeIndex({
      prisma: context.services.prisma,
      queues: context.services.queues,
      viewer,
      projectPath: input.projectPath,
      ref: input.ref,
      force: input.force ?? false,
    });
    return { codeIndex: toCodeIndexType(index), jobId, clientMutationId: input.clientMutationId ?? null, errors: [] };
  }
}

@Resolver(() => CodeIndexType)
export class CodeIndexDirectoriesResolver {
  @FieldResolver(() => [String], {
    description:
      'Directories of the indexed snapshot (every level), sorted by path: what a directory picker for directory context offers. Empty ' +
      'until the first index run completes.',
  })
  async directories(
    @Root() index: CodeIndexType,
    @Ctx() context: GraphQLContext,
    @Arg('search', () => String, { nullable: true, description: 'Only directories whose path contains this, case-insensitive.' })
    search?: string | null,
    @Arg('first', () => Int, { nullable: true, defaultValue: MAX_PAGE_SIZE, description: `At most this many (1 to ${MAX_PAGE_SIZE}).` })
    first?: number | null,
  ): Promise<string[]> {
    const viewer = requireViewer(context);
    const limit = first ?? MAX_PAGE_SIZE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE)
      throw badInput(`first must be between 1 and ${MAX_PAGE_SIZE}`, 'first');
    if (search && search.length > 1024) throw badInput('search is too long (maximum is 1024 characters)', 'search');
    const { prisma, config, queues } = context.services;
    const access = resolveDuoAccess({ prisma, userId: viewer.user.id, disabledCategories: config.disabledContextCategories });
    return listIndexedDirectories({ prisma, queues, viewer, access, project: String(index.projectId), ref: index.ref, search, limit });
  }
}
