import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, realpath, rename, rm, rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * Turns a package published on the npm registry into a one-commit git repository, so evaluations
 * can index a real code base with the same git-reading path as any project.
 *
 * `npm pack <spec>` fetches the tarball, `tar` unpacks it (its top folder, `package/`, stripped)
 * and git commits every file with the spec as the message. Author, committer and dates are fixed,
 * so the same tarball gives the same commit sha on every machine. Everything runs through
 * execFile, never a shell.
 *
 * When `directory` already holds a repository whose HEAD commit message is the spec, it is reused
 * as it is. A repository made here for another spec is replaced; any other non-empty directory is
 * refused rather than overwritten.
 */

export type MaterializedPackage = {
  /** Absolute path of the repository (the work tree, .git inside). */
  repository: string;
  /** Full sha of HEAD, the one commit. */
  commit: string;
  /** Files in the commit. */
  files: number;
  /** Their total size in bytes. */
  bytes: number;
};

const NPM_TIMEOUT_MS = 5 * 60_000;
const COMMAND_TIMEOUT_MS = 2 * 60_000;
const AUTHOR_NAME = 'eval';
const AUTHOR_EMAIL = 'eval@localhost';
const FIXED_DATE = '2000-01-01T00:00:00Z';

/**
 * Git options for commits that are the same on every machine: one author and date, and none of the
 * user's git configuration (signing, line endings, excludes, hooks), which must not change what is
 * committed or run anything.
 */
export function reproducibleGit(author: string): { config: string[]; env: NodeJS.ProcessEnv } {
  const email = `${author}@localhost`;
  const config = [
    ...[`user.name=${author}`, `user.email=${email}`, 'commit.gpgsign=false', 'core.autocrlf=false'],
    ...['core.excludesFile=/dev/null', 'core.hooksPath=/dev/null', 'init.defaultBranch=main'],
  ].flatMap((setting) => ['-c', setting]);
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: author,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: author,
    GIT_COMMITTER_EMAIL: email,
    GIT_AUTHOR_DATE: FIXED_DATE,
    GIT_COMMITTER_DATE: FIXED_DATE,
  };
  return { config, env };
}

const { config: GIT_CONFIG, env: GIT_ENV } = reproducibleGit(AUTHOR_NAME);

function run(
  command: string,
  args: string[],
  options: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? COMMAND_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (error) {
          const detail = String(stderr || error.message)
            .trim()
            .slice(0, 500);
          reject(new Error(`${command} ${args[0] ?? ''} failed: ${detail}`, { cause: error }));
          return;
        }
        resolve(stdout);
      },
    );
  });
}

const git = (repository: string, args: string[]) => run('git', ['-C', repository, ...GIT_CONFIG, ...args], { env: GIT_ENV });

type ExistingRepository = { spec: string; author: string } | null;

/** HEAD's message and author email when `directory` is a git repository with a commit, else null. */
async function readExisting(directory: string): Promise<ExistingRepository> {
  try {
    const top = (await git(directory, ['rev-parse', '--show-toplevel'])).trim();
    if ((await realpath(top)) !== (await realpath(directory))) return null;
    const [author = '', ...message] = (await git(directory, ['log', '-1', '--format=%ae%n%B', 'HEAD'])).split('\n');
    return { spec: message.join('\n').trim(), author: author.trim() };
  } catch {
    return null;
  }
}

async function isEmptyOrMissing(directory: string): Promise<boolean> {
  try {
    return (await readdir(directory)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

/** The commit, file count and byte total of a repository's HEAD. */
async function describe(repository: string): Promise<MaterializedPackage> {
  const commit = (await git(repository, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
  let files = 0;
  let bytes = 0;
  for (const record of (await git(repository, ['ls-tree', '-r', '-z', '--long', '--full-tree', commit])).split('\0')) {
    if (!record) continue;
    const [, type, , size] = record.slice(0, record.indexOf('\t')).split(/\s+/);
    if (type !== 'blob') continue;
    files += 1;
    bytes += Number(size) || 0;
  }
  return { repository, commit, files, bytes };
}

/** Runs `npm pack` into `destination` and answers the tarball's path. */
async function pack(spec: string, destination: string): Promise<string> {
  const stdout = await run('npm', ['pack', spec, '--pack-destination', destination, '--json'], {
    cwd: destination,
    timeoutMs: NPM_TIMEOUT_MS,
  });
  // Lifecycle scripts of git or directory specs may print before the JSON array.
  const start = stdout.indexOf('[');
  let entries: unknown;
  try {
    entries = JSON.parse(stdout.slice(start));
  } catch (error) {
    throw new Error(`npm pack ${spec} printed no JSON: ${stdout.slice(0, 300)}`, { cause: error });
  }
  const filename = Array.isArray(entries) ? (entries[0] as { filename?: unknown } | undefined)?.filename : undefined;
  if (typeof filename !== 'string' || !filename) throw new Error(`npm pack ${spec} named no tarball`);
  // Scoped packages are packed as scope-name-version.tgz, whatever the JSON says.
  const name = path.basename(filename.replace(/^@/, '').replace(/\//g, '-'));
  const candidates = [path.join(destination, name), path.join(destination, path.basename(filename))];
  const present = await readdir(destination);
  const tarball = candidates.find((candidate) => present.includes(path.basename(candidate)));
  if (!tarball) throw new Error(`npm pack ${spec} left no ${name} in ${destination}`);
  return tarball;
}

/**
 * Materializes `spec` (anything `npm pack` accepts, e.g. "mysql@2.18.1") as a git repository in
 * `directory`, reusing it when it already holds that spec. Answers the repository's absolute path,
 * its HEAD sha and the number and total size of its files.
 */
export async function materializeNpmPackage(options: { spec: string; directory: string }): Promise<MaterializedPackage> {
  const spec = options.spec.trim();
  if (!spec || spec.startsWith('-') || /[\0\r\n]/.test(spec)) throw new Error(`"${options.spec.slice(0, 100)}" is not a package spec`);
  return materializeTarball({ message: spec, directory: options.directory, fetch: (scratch) => pack(spec, scratch) });
}

/**
 * Materializes a Debian source package's upstream tarball (`package=version`, fetched with
 * `apt-get source --download-only`, which needs a deb-src entry for a suite that has that
 * version) as a git repository in `directory`, committed with `message` (the question set's name,
 * as data/retrieval-eval/README.md makes it by hand, so the sha is the same).
 */
export async function materializeDebianSource(options: {
  source: string;
  message: string;
  directory: string;
}): Promise<MaterializedPackage> {
  const source = options.source.trim();
  const match = /^([a-z0-9][a-z0-9.+-]*)=([0-9][A-Za-z0-9.+~:-]*)$/.exec(source);
  if (!match) throw new Error(`"${source.slice(0, 100)}" is not a Debian source package=version`);
  const [, name, version] = match;
  const upstream = version.replace(/^\d+:/, '').replace(/-[^-]*$/, '');
  return materializeTarball({
    message: options.message,
    directory: options.directory,
    fetch: async (scratch) => {
      // apt-get fails as a whole when one file of the source package is missing from the mirror;
      // only the upstream tarball is needed, so what it left behind decides.
      const failure = await run('apt-get', ['source', '--download-only', source], { cwd: scratch, timeoutMs: NPM_TIMEOUT_MS }).then(
        () => null,
        (error: Error) => error,
      );
      const tarball = (await readdir(scratch)).find((file) => file.startsWith(`${name}_${upstream}.orig.tar.`) && !file.endsWith('.asc'));
      if (!tarball)
        throw new Error(
          `apt-get source ${source} left no ${name}_${upstream}.orig.tar.*` +
            (failure ? `: ${failure.message} (is a deb-src entry for a suite with that version configured?)` : ''),
        );
      return path.join(scratch, tarball);
    },
  });
}

// What a binary package installs beside its code: documentation, manual pages, gem specifications, commands.
const BESIDE_THE_CODE =
  /^usr\/share\/(doc|doc-base|man|lintian|bash-completion|info)\/|^usr\/share\/rubygems-integration\/[^/]+\/specifications\/|^usr\/s?bin\//;

/** The deepest folder that holds every source file of `files` (paths relative to the unpacked package), or ''. */
export function codeRoot(files: readonly string[], isSource: (file: string) => boolean): string {
  const folders = files.filter((file) => !BESIDE_THE_CODE.test(file) && isSource(file)).map((file) => file.split('/').slice(0, -1));
  if (!folders.length) return '';
  let common = folders[0];
  for (const folder of folders.slice(1)) {
    let length = 0;
    while (length < common.length && length < folder.length && common[length] === folder[length]) length += 1;
    common = common.slice(0, length);
  }
  return common.join('/');
}

/**
 * Materializes the code a Debian binary package installs (`package=version`, fetched with
 * `apt-get download`): a Python module under dist-packages, a Go module under gocode, a Rust crate
 * under the cargo registry, a Ruby library under vendor_ruby. The package is unpacked with
 * `dpkg-deb -x` and the deepest folder holding all its source files (`isSource`; documentation,
 * manual pages and commands aside) becomes the repository, committed with `message`.
 */
export async function materializeDebianBinary(options: {
  package: string;
  message: string;
  directory: string;
  isSource: (file: string) => boolean;
}): Promise<MaterializedPackage> {
  const spec = options.package.trim();
  const match = /^([a-z0-9][a-z0-9.+-]*)=([0-9][A-Za-z0-9.+~:-]*)$/.exec(spec);
  if (!match) throw new Error(`"${spec.slice(0, 100)}" is not a Debian binary package=version`);
  return materializeTarball({
    message: options.message,
    directory: options.directory,
    fetch: async (scratch) => {
      const failure = await run('apt-get', ['download', spec], { cwd: scratch, timeoutMs: NPM_TIMEOUT_MS }).then(
        () => null,
        (error: Error) => error,
      );
      const deb = (await readdir(scratch)).find((file) => file.startsWith(`${match[1]}_`) && file.endsWith('.deb'));
      if (!deb) throw new Error(`apt-get download ${spec} left no .deb${failure ? `: ${failure.message}` : ''}`);
      const unpacked = path.join(scratch, 'unpacked');
      await mkdir(unpacked);
      await run('dpkg-deb', ['-x', path.join(scratch, deb), unpacked]);
      const files = (await readdir(unpacked, { recursive: true, withFileTypes: true }))
        .filter((entry) => entry.isFile())
        .map((entry) => path.relative(unpacked, path.join(entry.parentPath, entry.name)));
      const root = codeRoot(files, options.isSource);
      if (!root) throw new Error(`${spec} installs no source files`);
      // One top folder in the tarball, as materializeTarball strips it.
      const tarball = path.join(scratch, 'code.tar');
      await run('tar', ['-cf', tarball, '-C', path.dirname(path.join(unpacked, root)), path.basename(root)]);
      return tarball;
    },
  });
}

/**
 * A tarball (from `fetch`, into a scratch folder) unpacked without its top folder and committed
 * with `message` as a git repository in `directory`; reused when `directory` already holds a
 * repository made here with that message, replaced when it holds one made here with another.
 */
async function materializeTarball(options: {
  message: string;
  directory: string;
  fetch: (scratch: string) => Promise<string>;
}): Promise<MaterializedPackage> {
  const { message } = options;
  const repository = path.resolve(options.directory);

  const existing = await readExisting(repository);
  if (existing?.spec === message) return describe(repository);
  const replace = existing !== null && existing.author === AUTHOR_EMAIL;
  if (!replace && !(await isEmptyOrMissing(repository))) {
    throw new Error(`${repository} is not empty and holds no package materialized here: refusing to overwrite it`);
  }

  const parent = path.dirname(repository);
  await mkdir(parent, { recursive: true });
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'npm-source-'));
  // Built beside the target, then renamed in: an interrupted run never leaves a half repository there.
  const building = path.join(parent, `.${path.basename(repository)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const tarball = await options.fetch(scratch);
    await mkdir(building);
    await run('tar', ['-xf', tarball, '-C', building, '--strip-components=1', '--no-same-owner', '--no-same-permissions']);
    await git(building, ['init', '-q']);
    await git(building, ['add', '-A', '--force']);
    await git(building, ['commit', '-q', '--allow-empty', '--no-verify', '-m', message]);

    if (replace) await rm(repository, { recursive: true, force: true });
    else await rmdir(repository).catch(() => undefined); // empty or missing, checked above
    try {
      await rename(building, repository);
    } catch (error) {
      // Another run may have materialized the same source meanwhile: take its result.
      if ((await readExisting(repository))?.spec === message) return await describe(repository);
      throw error;
    }
    // Awaited here, not returned pending: a failing clean-up below must not leave it unhandled.
    return await describe(repository);
  } finally {
    await rm(scratch, { recursive: true, force: true });
    await rm(building, { recursive: true, force: true });
  }
}
