import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
};

/** A real git repository in a temporary directory, changed the way a developer would. */
export type GitRepo = {
  path: string;
  git(...args: string[]): string;
  write(file: string, content: string | Buffer): void;
  remove(file: string): void;
  /** Stages everything and commits; returns the new commit. */
  commit(message?: string): string;
  head(): string;
  destroy(): void;
};

export function createGitRepo(files: Record<string, string | Buffer> = {}, branch = 'main'): GitRepo {
  const root = mkdtempSync(path.join(os.tmpdir(), 'duo-repo-'));
  const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', env: GIT_ENV }).trim();
  const write = (file: string, content: string | Buffer) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  };
  git('init', '-q', '-b', branch);
  for (const [file, content] of Object.entries(files)) write(file, content);
  const repo: GitRepo = {
    path: root,
    git,
    write,
    remove: (file) => unlinkSync(path.join(root, file)),
    commit: (message = 'change') => {
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', message);
      return git('rev-parse', 'HEAD');
    },
    head: () => git('rev-parse', 'HEAD'),
    destroy: () => rmSync(root, { recursive: true, force: true }),
  };
  if (Object.keys(files).length) repo.commit('initial');
  return repo;
}

/** Some small real-looking code in a few languages. */
export const SAMPLE_FILES: Record<string, string> = {
  'src/connection.ts': `import { Socket } from 'node:net';

/** Parses a connection string like postgres://user@host:5432/db. */
export function parseConnection(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 5432) };
}

export class ConnectionPool {
  private readonly sockets: Socket[] = [];

  acquire(): Socket | undefined {
    return this.sockets.pop();
  }

  release(socket: Socket): void {
    this.sockets.push(socket);
  }
}
`,
  'src/retry.py': `import time


def retry_with_backoff(operation, attempts=3, base_delay=0.5):
    """Calls operation until it succeeds, waiting longer after each failure."""
    for attempt in range(attempts):
        try:
            return operation()
        except Exception:
            if attempt == attempts - 1:
                raise
            time.sleep(base_delay * 2 ** attempt)
`,
  'docs/guide.md': `# Guide

How to configure the invoice mailer.

Set MAILER_HOST and MAILER_PORT before starting the service.
`,
  'lib/invoice.rb': `class InvoiceMailer
  def deliver(invoice)
    puts "sending invoice #{invoice.id}"
  end
end
`,
};

/** SAMPLE_FILES plus a small billing directory: two files that answer questions about tax and discounts. */
export const BILLING_FILES: Record<string, string> = {
  ...SAMPLE_FILES,
  'src/billing/tax.ts': `/** Computes value-added tax for an invoice line. */
export function computeVatAmount(netAmount: number, ratePercent: number): number {
  return Math.round(netAmount * ratePercent) / 100;
}
`,
  'src/billing/discount.ts': `export function applyLoyaltyDiscount(total: number, years: number): number {
  const percent = Math.min(years * 2, 20);
  return total - (total * percent) / 100;
}
`,
};
