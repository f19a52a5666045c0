import { Prisma, type PrismaClient } from './prisma';

/**
 * Table statistics where nothing else keeps them. PostgreSQL's autovacuum analyzes a table once
 * about a tenth of it has changed; the embedded database (one session, no autovacuum) and a server
 * run without autovacuum never do. The planner then costs a grown table by the size it had when
 * last measured, and keeps generic plans made from it: on a fresh install the vector search never
 * used its HNSW graph (345–516 ms a search at 50,000 chunks against 4.5 ms once analyzed), and
 * plans made while a table held a few pages read it whole after it grew (docs/performance.md,
 * "Statistics where nothing else keeps them"). ANALYZE also makes PostgreSQL drop the plans it kept for the table.
 */

/** The code index's tables, which an index run grows. */
export const CODE_INDEX_TABLES = ['code_chunks', 'code_chunk_vectors', 'code_blob_chunks', 'code_index_files'] as const;

/**
 * Tables smaller than this (pages of 8 KB) are left unmeasured: the planner's estimates from a table's
 * size serve them well, and statistics taken while a table is tiny do harm. Measured at two rows (the
 * maintenance job at a worker's start), ai_messages got a conversation read that sorted the user's
 * whole history: 3-5 ms a read once it held 10,000 messages, 2.5 ms of PostgreSQL's CPU per aiAction in
 * bench/chat.ts, against 0.05 ms on the index. Autovacuum likewise waits for 50 changed rows.
 */
export const MIN_ANALYZED_PAGES = 64;

/**
 * Analyzes the tables (all of the schema's, or those named) of at least MIN_ANALYZED_PAGES whose
 * statistics are missing or stale: never measured, or grown by over a tenth and 4 pages
 * (autovacuum's rule, in pages: the embedded database keeps no change counts) since they were; with
 * `always`, every one. Nothing when an autovacuum launcher runs: it does this. Answers the tables analyzed.
 */
export async function refreshTableStatistics(
  prisma: PrismaClient,
  options: { tables?: readonly string[]; always?: boolean } = {},
): Promise<string[]> {
  const only = options.tables ? Prisma.sql`AND c.relname = ANY(${[...options.tables]}::text[])` : Prisma.empty;
  const always = options.always ?? false;
  const stale = await prisma.$queryRaw<Array<{ name: string }>>`
    SELECT quote_ident(c.relname) AS name
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    CROSS JOIN LATERAL (SELECT pg_relation_size(c.oid) / current_setting('block_size')::int AS pages) size
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ${only}
      AND NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher')
      AND size.pages >= ${MIN_ANALYZED_PAGES}
      AND (c.reltuples < 0 OR size.pages > c.relpages * 1.1 + 4 OR ${always})
    ORDER BY c.relname`;
  for (const { name } of stale) await prisma.$executeRawUnsafe(`ANALYZE ${name}`);
  return stale.map(({ name }) => name);
}
