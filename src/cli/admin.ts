import { parseArgs } from 'node:util';
import { isAppError } from '../errors';
import { ADMIN_COMMANDS, checkFlags, usage } from './admin-commands';
import { runCommand } from './run-command';

function parse(argv: string[]) {
  const [name, ...rest] = argv;
  const command = name ? ADMIN_COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`${name ? `Unknown command "${name}".\n\n` : ''}${usage()}\n`);
    process.exit(2);
  }
  try {
    const options = Object.fromEntries(
      Object.entries(command.flags).map(([flag, help]) => [
        flag,
        { type: help.includes('(flag)') ? ('boolean' as const) : ('string' as const) },
      ]),
    );
    const { values } = parseArgs({ args: rest, options, strict: true, allowPositionals: false });
    const flags = values as Record<string, string | boolean | undefined>;
    checkFlags(command, flags);
    return { command, flags };
  } catch (error) {
    process.stderr.write(`error: ${isAppError(error) ? error.userMessage : (error as Error).message}\n\n${usage()}\n`);
    process.exit(2);
  }
}

const { command, flags } = parse(process.argv.slice(2));
void runCommand((context) => command.run(context.database.prisma, flags, context));
