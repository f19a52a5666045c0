import 'reflect-metadata';
import { ConfigError, loadConfig, type Config } from '../config';
import { openDatabase, type Database } from '../db/database';
import { isAppError } from '../errors';
import { createLogger, type Logger } from '../logger';

export type CommandContext = { config: Config; database: Database; logger: Logger };

/**
 * Runs a command against the configured database: PostgreSQL, the embedded one through a running
 * service's socket, or the embedded one directly (taking its lock) when no service runs.
 * Prints the command's answer as one JSON line on stdout; errors go to stderr with exit code 1.
 */
export async function runCommand(command: (context: CommandContext) => Promise<unknown>): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(2);
  }
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, { stderr: true });
  let database: Database | undefined;
  let exitCode = 0;
  try {
    database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      logger,
      embeddedRole: 'client',
      poolSize: 2,
    });
    if (database.kind !== 'embedded-socket') await database.migrate();
    const answer = await command({ config, database, logger });
    if (answer !== undefined) process.stdout.write(`${JSON.stringify(answer)}\n`);
  } catch (error) {
    exitCode = 1;
    process.stderr.write(`error: ${isAppError(error) ? error.userMessage : (error as Error).message}\n`);
    if (!isAppError(error)) logger.error({ event: 'command_failed', err: error }, 'command failed');
  } finally {
    await database?.close().catch(() => undefined);
  }
  process.exit(exitCode);
}
