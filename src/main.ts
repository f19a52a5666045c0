import './production-mode';
import 'reflect-metadata';
import v8 from 'node:v8';
import { ConfigError, loadConfig } from './config';
import { isAppError } from './errors';
import { DUO_CHAT_PATH } from './http/duo-chat-page';
import { createLogger } from './logger';
import { lowerCpuPriority } from './process-priority';
import { parseServiceArgs, SERVICE_USAGE } from './service-args';
import { startService, type Role } from './start-service';

function parseRole(argv: string[]): Role {
  const parsed = parseServiceArgs(argv);
  if ('help' in parsed) {
    console.log(SERVICE_USAGE);
    process.exit(0);
  }
  if ('error' in parsed) {
    console.error(`${parsed.error}\n\n${SERVICE_USAGE}`);
    process.exit(2);
  }
  return parsed.role;
}

/**
 * WebAssembly (the embedded PostgreSQL, Prisma's query compiler, tree-sitter grammars) is compiled
 * on V8's background threads, and its hot functions again by the optimizing compiler, whose
 * scratch memory runs to tens of MiB for PostgreSQL's largest functions. Each thread frees it into
 * its own malloc arena, which keeps it: one compilation at a time leaves one such arena, not four
 * (restart idle RSS about 15–20 MiB lower, and steadier). The event loop is not involved; only
 * WebAssembly compilation is less parallel. `node --wasm-num-compilation-tasks=N` still wins.
 */
function limitWasmCompilation(): void {
  if (process.execArgv.some((argument) => argument.startsWith('--wasm-num-compilation-tasks'))) return;
  v8.setFlagsFromString('--wasm-num-compilation-tasks=1');
}

async function main(): Promise<void> {
  limitWasmCompilation();
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
  // Before any thread of the service's own starts, so each inherits it.
  if (role === 'worker') lowerCpuPriority({ nice: config.workerNice, logger });
  // Signals are taken from the start: one that arrives while the service is still starting (HTTP
  // may already answer) stops it as soon as it has started, in order, instead of killing it.
  let requested: string | null = null;
  let onSignal = (signal: string) => {
    requested ??= signal;
  };
  let onFatal = () => {
    requested ??= 'fatal';
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  let service;
  try {
    // The embedded database's thread died: nothing can be served, so stop (non-zero) for a supervisor to restart.
    service = await startService({ config, logger, role, onFatal: () => onFatal() });
  } catch (error) {
    console.error(`duo-slice could not start: ${isAppError(error) ? error.userMessage : (error as Error).message}`);
    if (!isAppError(error)) logger.error({ event: 'startup_failed', err: error }, 'startup failed');
    process.exit(1);
  }
  if (service.url) {
    const lines = [
      ``,
      `duo-slice is running (${role}).`,
      `  Duo Chat: ${service.url}${DUO_CHAT_PATH}`,
      `  GraphQL playground: ${service.url}/api/graphql`,
    ];
    if (service.demo) {
      lines.push(
        `  Demo user: ${service.demo.username}, project ${service.demo.project}`,
        `  Demo token (shown once): ${service.demo.token}  (paste it into ${service.url}${DUO_CHAT_PATH})`,
      );
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
      .then(() => process.exit(signal === 'fatal' ? 1 : 0))
      .catch((error) => {
        logger.error({ event: 'shutdown_failed', err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  onSignal = stop;
  onFatal = () => stop('fatal');
  if (requested) stop(requested);
}

void main();
