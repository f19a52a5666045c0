import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

/** Starts `src/main.ts --role=worker` as a process of its own (to kill it with SIGKILL mid-job). */
export function spawnWorker(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['-r', '@swc-node/register', path.join('src', 'main.ts'), '--role=worker'], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: 'ignore',
  });
}
