import { Arg, Ctx, ID, Int, Query, Resolver } from 'type-graphql';
import { badInput } from '../errors';
import type { GraphQLContext } from '../graphql/context';
import { requireViewer } from '../graphql/require-viewer';
import { codebaseSearch } from '../search/codebase.service';
import { requireSearchableQuery } from '../search/text-query';
import { CodebaseSearchHitType } from './codebase-search.types';

@Resolver()
export class CodebaseSearchResolver {
  @Query(() => [CodebaseSearchHitType], {
    description: "Searches a project's indexed code (hybrid vector and full-text retrieval) as Duo Chat's repository context does.",
  })
  async codebaseSearch(
    @Ctx() context: GraphQLContext,
    @Arg('projectPath', () => ID, { description: 'Full path of the project.' }) projectPath: string,
    @Arg('query', () => String, { description: 'A question or keywords.' }) query: string,
    @Arg('directory', () => String, { nullable: true, description: 'Only files under this directory.' }) directory?: string | null,
    @Arg('ref', () => String, { nullable: true, description: "Branch. Default: the project's default branch." }) ref?: string | null,
    @Arg('first', () => Int, { defaultValue: 10, description: 'Number of hits (1-100).' }) first = 10,
  ): Promise<CodebaseSearchHitType[]> {
    const viewer = requireViewer(context);
    if (!query.trim()) throw badInput("query can't be blank", 'query');
    if (query.length > 2000) throw badInput('query is too long (maximum is 2000 characters)', 'query');
    requireSearchableQuery(query, 'query');
    if (first < 1 || first > 100) throw badInput('first must be between 1 and 100', 'first');
    const { prisma, queues, embedder, reranking } = context.services;
    const result = await codebaseSearch({
      prisma,
      queues,
      embedder,
      reranking,
      viewer,
      access: context.duoAccess(),
      project: projectPath,
      query,
      directory,
      ref,
      limit: first,
      dataDir: context.services.config.dataDir,
    });
    return result.files.flatMap((file) =>
      file.snippets.map((snippet) => ({
        path: file.path,
        blobId: file.blob,
        language: file.language,
        startLine: snippet.startLine,
        endLine: snippet.endLine,
        content: snippet.content,
        score: snippet.score,
        symbol: snippet.symbol,
      })),
    );
  }
}
