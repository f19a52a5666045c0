import { spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

export type CliResult = { code: number | null; stdout: string; stderr: string };

/** Runs one of our npm-script commands (src/cli/<name>.ts) as its own process, as a user would. */
export function runCli(name: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', path.join('src', 'cli', `${name}.ts`), ...args], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // A hung command fails its test with what it printed, instead of hanging the run.
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
