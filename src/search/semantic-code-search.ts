import { resolveDuoAccess, type DuoAccessOptions } from '../auth/duo-access';
import { codebaseSearch, type CodebaseSearchOptions } from './codebase.service';
import { presentSemanticResults, type SemanticSearchAnswer } from './semantic-code-results';

export type SemanticCodeSearchOptions = Omit<CodebaseSearchOptions, 'access' | 'mode'> & {
  /** Context categories the instance has switched off (DUO_DISABLED_CONTEXT_CATEGORIES). */
  disabledCategories: DuoAccessOptions['disabledCategories'];
  /** The instance's public URL, without a trailing slash (for each result's file_url). */
  externalUrl: string;
};

/**
 * GitLab's semantic code search, as REST `search/semantic` and the MCP `semantic_code_search` tool
 * answer it: the viewer's Duo access, the codebase search (which authorizes), GitLab's shape.
 */
export async function semanticCodeSearch(options: SemanticCodeSearchOptions): Promise<SemanticSearchAnswer> {
  const { disabledCategories, externalUrl, ...search } = options;
  const access = resolveDuoAccess({ prisma: search.prisma, userId: search.viewer.user.id, disabledCategories });
  return presentSemanticResults({ result: await codebaseSearch({ ...search, access }), externalUrl });
}
