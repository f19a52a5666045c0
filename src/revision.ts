import { execFileSync } from 'node:child_process';
import { PROJECT_ROOT } from './paths';

/** The git commit the service runs from, or "unknown" outside a checkout. Read once at start. */
export function readRevision(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short=11', 'HEAD'], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2000,
    })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}
