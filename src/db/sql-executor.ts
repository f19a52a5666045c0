/** The least a migration runner needs from a database: both `pg` and PGlite provide it. */
export interface SqlExecutor {
  /** One statement with positional parameters ($1, $2, ...). */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Several statements at once, no parameters. */
  exec(sql: string): Promise<void>;
}
