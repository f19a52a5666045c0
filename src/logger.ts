import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout (stderr for CLI commands, whose stdout is their answer); every line has an `event` name where it matters.
 */
export function createLogger(level: string, options: { stderr?: boolean; bindings?: Record<string, unknown> } = {}): Logger {
  const bindings = options.bindings ?? {};
  return pino(
    {
      level,
      base: { service: 'duo-slice', ...bindings },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['token', 'headers.authorization', 'headers["private-token"]', '*.token'], remove: true },
    },
    pino.destination({ fd: options.stderr ? 2 : 1, sync: true }),
  );
}
