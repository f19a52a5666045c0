import type pg from 'pg';
import type { Prisma } from './prisma';
import { withPoolClient } from './pool-client';

/**
 * Statements sent straight to the client's `pg` pool, past Prisma: an index run's large writes
 * (withBulkTransaction) and the hot paths' reads and inserts (poolRows, queryRows).
 *
 * Large writes (an index run's chunks: megabytes of code, vectors and full-text documents per
 * statement) go straight to the PostgreSQL pool when there is one. Through Prisma, every raw
 * statement's parameters also pass through its query compiler, and the process kept about 3 MiB
 * for each such statement of 1 MB (measured: +200 MiB of RSS after 80 of them), where `pg` alone
 * keeps nothing. The pool is found from the Prisma client it backs, so callers keep passing one
 * client. The embedded database has a pool too (its thread's socket), so the same path serves it;
 * a client made elsewhere (no pool known) keeps writing through Prisma.
 */
const pools = new WeakMap<object, pg.Pool>();
/**
 * Pools whose connections are sessions of their own (PostgreSQL's), where queryRows may name its
 * statements. The embedded database's connections all share PGlite's one session: a statement
 * one of them prepared already exists for the next, which would fail to prepare it again.
 */
const ownSessions = new WeakSet<pg.Pool>();

/** Called by openDatabase for the client it makes over a pool (PostgreSQL's, or the embedded database's socket). */
export function registerBulkPool(prisma: object, pool: pg.Pool, options: { sessionPerConnection: boolean }): void {
  pools.set(prisma, pool);
  if (options.sessionPerConnection) ownSessions.add(pool);
}

/** Whether the client has a pool of its own (poolRows runs on it), as a transaction's client has not. */
export const hasPool = (client: object): boolean => pools.has(client);

/** One statement with positional parameters (as Prisma takes them: a bigint is sent as text), on the transaction's connection. */
export type BulkStatement = (sql: string, params?: unknown[]) => Promise<unknown>;

/**
 * Runs `work` in a transaction on one connection of the client's PostgreSQL pool, or answers
 * undefined (without running it) when the client has no pool. Statements time out after
 * `timeoutMs`, as Prisma's interactive transactions do.
 */
export async function withBulkTransaction<T>(
  prisma: object,
  options: { timeoutMs: number },
  work: (statement: BulkStatement) => Promise<T>,
): Promise<{ value: T } | undefined> {
  const pool = pools.get(prisma);
  if (!pool) return undefined;
  return withPoolClient(pool, async (client, broke) => {
    await client.query('BEGIN');
    try {
      await client.query("SELECT set_config('statement_timeout', $1, true)", [String(options.timeoutMs)]);
      const value = await work(async (sql, params) => client.query(sql, params && pgValues(params)));
      await client.query('COMMIT');
      return { value };
    } catch (error) {
      // A connection whose rollback failed is in an unknown state: it is closed, not reused.
      await client.query('ROLLBACK').catch(broke);
      throw error;
    }
  });
}

/**
 * The rows of one statement straight on the client's pool, or undefined (without running it) when
 * the client has no pool (a transaction's client, or a client made elsewhere). Through Prisma, each
 * statement's parameters and rows also pass through its query compiler, tracing and result mapping:
 * about 0.2 ms of CPU per chat statement, and about 0.8 ms per search at 100k chunks (its ranking
 * statements carry 50–100 rows of code). Same SQL, same pool. Parameters as Prisma takes them (a
 * bigint is sent as text); int8 and numeric results come back as `pg` gives them (text), where
 * Prisma gives bigint and Decimal. Errors are `pg`'s (see isUniqueViolation). `prepare` names the
 * statement (see preparedName): only for fixed texts, or a PreparedFamily of texts that vary with a
 * caller's input, and only where a generic plan is as good as a custom one (search's text statements
 * are not: their tail grew with generic plans).
 */
export async function poolRows<Row>(
  client: object,
  text: string,
  parameters: readonly unknown[],
  options: { prepare?: boolean | PreparedFamily } = {},
): Promise<Row[] | undefined> {
  const pool = pools.get(client);
  if (!pool) return undefined;
  const name = options.prepare && ownSessions.has(pool) ? preparedName(text, options.prepare === true ? null : options.prepare) : undefined;
  return (await pool.query({ name, text, values: pgValues(parameters) })).rows as Row[];
}

/** Parameters as Prisma takes them, for `pg`: a bigint (which `pg` cannot send) as its text. */
function pgValues(parameters: readonly unknown[]): unknown[] {
  return parameters.map((value) => (typeof value === 'bigint' ? value.toString() : value));
}

/**
 * A raw read or INSERT … RETURNING of the hot paths (every chat request makes three or four),
 * prepared on the client's pool when it has one (poolRows), else through Prisma's $queryRaw. The
 * rows are the same either way for the types these statements return (int4, text, bool, text[],
 * jsonb, timestamptz): both parse them to the same JavaScript values.
 */
export async function queryRows<Row>(client: Prisma.TransactionClient, statement: Prisma.Sql): Promise<Row[]> {
  const rows = await poolRows<Row>(client, statement.text, statement.values, { prepare: true });
  return rows ?? client.$queryRaw<Row[]>(statement);
}

/** Statement texts queryRows has named, and their names: the same text has the same name on every connection. */
const preparedNames = new Map<string, string>();
/** More texts than this are sent unnamed: a caller that built its text from its data must not grow every connection without end. */
const MAX_PREPARED = 64;

/**
 * Texts of one statement that vary with a caller's input (a limit written into the text): at most
 * `most` of them are named, so that input cannot use up MAX_PREPARED for the other statements.
 */
export type PreparedFamily = { family: string; most: number };
/** How many texts each family has named. */
const familySizes = new Map<string, number>();

/**
 * A named statement is parsed and analysed once per connection, and its plan is cached (PostgreSQL
 * keeps a generic one once it is no worse than the custom ones): planning was 0.15–0.3 ms of
 * database CPU per chat statement, about as much as running it. PostgreSQL's pool only (see ownSessions).
 */
function preparedName(text: string, family: PreparedFamily | null): string | undefined {
  let name = preparedNames.get(text);
  if (name !== undefined || preparedNames.size >= MAX_PREPARED) return name;
  if (family) {
    const size = familySizes.get(family.family) ?? 0;
    if (size >= family.most) return undefined;
    familySizes.set(family.family, size + 1);
  }
  name = `duo_${preparedNames.size}`;
  preparedNames.set(text, name);
  return name;
}
