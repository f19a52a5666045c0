import 'reflect-metadata';
import { ConfigError, loadConfig } from './config';
import { isAppError } from './errors';
import { createLogger } from './logger';
import { startService, type Role } from './service';

function parseRole(argv: string[]): Role {
  const flag = argv.find((argument) => argument.startsWith('--role='));
  const role = flag?.slice('--role='.length) ?? 'all';
  if (role !== 'all' && role !== 'api' && role !== 'worker') {
    console.error(`Unknown --role=${role}: use all, api or worker`);
    process.exit(2);
  }
  return role;
}

async function main(): Promise<void> {
  const role = parseRole(process.argv.slice(2));
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel, { bindings: { role } });
  let service;
  try {
    service = await startService({ config, logger, role });
  } catch (error) {
    console.error(`duo-slice could not start: ${isAppError(error) ? error.userMessage : (error as Error).message}`);
    if (!isAppError(error)) logger.error({ event: 'startup_failed', err: error }, 'startup failed');
    process.exit(1);
  }
  if (service.url) {
    const lines = [``, `duo-slice is running (${role}).`, `  GraphQL playground: ${service.url}/api/graphql`];
    if (service.demo) {
      lines.push(`  Demo user: ${service.demo.username}, project ${service.demo.project}`, `  Demo token (shown once): ${service.demo.token}`);
      lines.push(`  In the playground's Headers tab: { "Authorization": "Bearer ${service.demo.token}" }`);
    }
    console.log(`${lines.join('\n')}\n`);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'shutdown_started', signal }, 'shutting down');
    service
      .close()
      .then(() => process.exit(0))
      .catch((error) => {
        logger.error({ event: 'shutdown_failed', err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

void main();
