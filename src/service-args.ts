import type { Role } from './start-service';

export const SERVICE_USAGE = `Usage: npm start [-- --role=all|api|worker]   (node dist/src/main.js [--role=...])

  --role=all     the API and the workers in one process (default)
  --role=api     HTTP only: GraphQL, REST, WebSockets, MCP, the chat page
  --role=worker  the queues' workers only (chat answers, indexing), at WORKER_NICE
  -h, --help     this text

Settings come from the environment (PORT, DATABASE_URL, REDIS_URL, REDIS_PREFIX, LLM_PROVIDER, ...):
docs/configuration.md lists them all. Admin commands: npm run admin.`;

export type ServiceArgs = { role: Role } | { help: true } | { error: string };

/** `main.ts`'s command line: a role, help, or what is wrong with it (the service must not start on a typo). */
export function parseServiceArgs(argv: readonly string[]): ServiceArgs {
  let role: string | null = null;
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (argument === '-h' || argument === '--help') return { help: true };
    const value = argument.startsWith('--role=') ? argument.slice('--role='.length) : argument === '--role' ? argv[++index] : undefined;
    if (value === undefined && argument !== '--role') return { error: `Unknown argument: ${argument}` };
    if (value === undefined) return { error: '--role needs a value: all, api or worker' };
    if (role !== null) return { error: '--role is given twice' };
    role = value;
  }
  if (role === null) return { role: 'all' };
  if (role !== 'all' && role !== 'api' && role !== 'worker') return { error: `Unknown --role=${role}: use all, api or worker` };
  return { role };
}
