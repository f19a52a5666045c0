import type { Reranking } from '../llm/rerankers/reranker';
import { LlmError } from '../llm/types';
import { observeRerank } from '../metrics/record';
import type { FileHits } from './group-hits';

/**
 * The optional reranker (RERANK_PROVIDER) over the search's best files. Its candidates are the
 * first `candidates` files of the file ranking, each as one document: its path and the snippet
 * shown first (choose-snippets.ts: boilerplate left out, the chunk that answers best), cut to
 * `maxChars`. The reranker reads what the user and the model will be shown. The other snippets of
 * the first SNIPPET_FILES files go in the same request, each as a document of its own, and each of
 * those files' snippets is reordered by the same fusion: the cross-encoder reads which of a file's
 * snippets answers, which keyword and word counts can only guess (choose-snippets.ts).
 *
 * Its order is fused with the search's own by weighted reciprocal rank fusion rather than
 * replacing it: each side sees evidence the other does not. The cross-encoder reads the question
 * and one snippet together, word order and all; the search's order holds what a snippet does not
 * show: several matching chunks of a file, the file's BM25 score over all of it, its role (tests,
 * docs) and tests lending weight to what they test. Ranks, not scores, are fused because rerankers'
 * scores are on no common scale (TEI's are probabilities, llama.cpp's raw logits, Cohere's
 * calibrated), as the vector and keyword rankings are fused (fuse-rankings.ts). With weight 1 it is
 * the classic retrieve-then-rerank: the reranker's order alone. Files after the candidates keep
 * their place. A reranker that fails or runs out of time (RERANK_TIMEOUT_MS) leaves the search's
 * order as it was: it is logged (`code_search_rerank_failed`) and counted
 * (`duo_rerank_requests_total`), never an error of the search.
 */

export type RerankFilesOptions = {
  question: string;
  reranking: Reranking;
  /** For the log line of a failure. */
  projectId: number;
};

export type RerankFilesResult = {
  files: FileHits[];
  /** True when the reranker's order was fused in; false when it failed (the files are as given) or there was nothing to reorder. */
  reranked: boolean;
};

/**
 * RRF's k for fusing the two orders, as for the vector and keyword rankings (search-code.ts): the
 * lists are a few dozen files deep and the answer is their first few.
 */
const RERANK_FUSION_K = 5;

/**
 * Files whose other snippets the reranker reads too, to reorder them: the first few, which the user
 * reads first and the model is given first; each adds at most two documents (the service's default
 * three snippets per file).
 */
const SNIPPET_FILES = 5;

/** The text cut to at most `maxChars` UTF-16 units, never between the two halves of a surrogate pair. */
export function cutText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

/** What the reranker reads of a file: its path on the first line, then one of its snippets (the first), at most `maxChars` in all. */
export function rerankDocument(file: Pick<FileHits, 'path' | 'snippets'>, maxChars: number, snippet = 0): string {
  return cutText(`${file.path}\n${file.snippets[snippet]?.content ?? ''}`, maxChars);
}

/**
 * A list reordered by the weighted reciprocal rank fusion of its own order and the reranker's
 * scores (one per item, in its order); ties go to the reranker's order. Each item's place in both
 * orders is 1-based.
 */
function fuseOrders<T>(items: readonly T[], scores: readonly number[], weight: number): T[] {
  const byScore = items.map((_, index) => index).sort((a, b) => scores[b] - scores[a] || a - b);
  const rerankRank = new Array<number>(items.length);
  byScore.forEach((index, rank) => (rerankRank[index] = rank + 1));
  return items
    .map((item, index) => ({
      item,
      index,
      score: (1 - weight) / (RERANK_FUSION_K + index + 1) + weight / (RERANK_FUSION_K + rerankRank[index]),
    }))
    .sort((a, b) => b.score - a.score || rerankRank[a.index] - rerankRank[b.index])
    .map((entry) => entry.item);
}

/**
 * A file's snippets reordered by the fusion of their order and the reranker's scores (one per
 * snippet); each takes the score of its new place.
 */
function rerankSnippets(file: FileHits, scores: readonly number[], weight: number): FileHits {
  const snippets = fuseOrders(file.snippets, scores, weight);
  return { ...file, snippets: snippets.map((snippet, place) => ({ ...snippet, score: file.snippets[place].score })) };
}

/**
 * The files (best first, as groupHits orders them) with the first `candidates` reordered by the
 * fusion of their order and the reranker's. Each reranked file takes the score of the place it
 * moves to, so scores still fall with the order.
 */
export async function rerankFiles(files: readonly FileHits[], options: RerankFilesOptions): Promise<RerankFilesResult> {
  const { reranker, candidates, weight, maxChars, logger } = options.reranking;
  const head = files.slice(0, candidates);
  // Nothing to reorder: one file (or none) with one snippet.
  if (head.length < 2 && (head[0]?.snippets.length ?? 0) < 2) return { files: [...files], reranked: false };
  // After the files' documents, the other snippets of the first SNIPPET_FILES files: [file, snippet] of each.
  const others = head.slice(0, SNIPPET_FILES).flatMap((file, at) => file.snippets.slice(1).map((_, snippet) => [at, snippet + 1] as const));
  const startedAt = Date.now();
  let scores: number[];
  try {
    scores = await reranker.rerank({
      query: cutText(options.question, maxChars),
      documents: [
        ...head.map((file) => rerankDocument(file, maxChars)),
        ...others.map(([at, snippet]) => rerankDocument(head[at], maxChars, snippet)),
      ],
    });
  } catch (error) {
    const kind = error instanceof LlmError ? error.kind : 'other';
    observeRerank({ provider: reranker.name, outcome: kind, startedAt });
    logger.warn(
      {
        event: 'code_search_rerank_failed',
        projectId: options.projectId,
        provider: reranker.name,
        model: reranker.model,
        kind,
        status: error instanceof LlmError ? error.status : undefined,
        retryable: error instanceof LlmError ? error.isRetryable : false,
        candidates: head.length,
        durationMs: Date.now() - startedAt,
        err: error,
      },
      'the reranker failed; the search keeps its own order',
    );
    return { files: [...files], reranked: false };
  }
  observeRerank({ provider: reranker.name, outcome: 'ok', startedAt });

  // Each file's snippets first, by their own documents' scores (the first snippet's is its file's).
  const withSnippets = head.map((file, at) => {
    const own = others.flatMap(([of], index) => (of === at ? [scores[head.length + index]] : []));
    return own.length ? rerankSnippets(file, [scores[at], ...own], weight) : file;
  });
  // Then the files, by their first snippets' scores as the search showed them. Ties (a file first in
  // one order and second in the other, and the reverse) go to the reranker's order.
  const order = fuseOrders(
    withSnippets.map((_, at) => at),
    scores.slice(0, head.length),
    weight,
  );
  const reordered = order.map((at, place) => ({ ...withSnippets[at], score: head[place].score }));
  return { files: [...reordered, ...files.slice(candidates)], reranked: true };
}
