import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync, mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BlobReader,
  isAncestor,
  listFiles,
  changedEntries,
  readBlobs,
  resolveBranchFirst,
  resolveCommit,
  validateRef,
  withSizes,
} from '../../src/indexing/git-reader';

// A real repository made for the test, read with the real git.
describe('git reader', () => {
  let repository: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repository, ...args], {
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@example.com',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@example.com',
      },
    }).trim();
  const write = (file: string, content: string) => {
    mkdirSync(path.dirname(path.join(repository, file)), { recursive: true });
    writeFileSync(path.join(repository, file), content);
  };
  let first: string;
  let second: string;

  beforeAll(() => {
    repository = mkdtempSync(path.join(os.tmpdir(), 'duo-git-'));
    git('init', '-q', '-b', 'main');
    write('src/a.ts', 'export const a = 1;\n');
    write('src/b.ts', 'export const b = 2;\n');
    write('docs/space name.md', '# hello\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'first');
    first = git('rev-parse', 'HEAD');
    write('src/a.ts', 'export const a = 10;\n');
    unlinkSync(path.join(repository, 'src/b.ts'));
    write('src/c.ts', 'export const c = 3;\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'second');
    second = git('rev-parse', 'HEAD');
  });
  afterAll(() => rmSync(repository, { recursive: true, force: true }));

  it.each(['main', 'refs/heads/feature/x', 'v1.2.3'])('accepts the ref %s', (ref) => {
    expect(validateRef(ref)).toBe(ref);
  });

  it.each(['--upload-pack=evil', 'a..b', 'a b', 'a~1', 'a^', 'a:b', 'refs/heads/.hidden', 'x.lock', '@', 'a@{1}', '', 'a\\b'])(
    'refuses the ref %j',
    (ref) => {
      expect(() => validateRef(ref)).toThrow(/is not a valid git ref/);
    },
  );

  it('resolves branches and shas, and answers null for what is not there', async () => {
    expect(await resolveCommit({ repository }, 'main')).toBe(second);
    expect(await resolveCommit({ repository }, first)).toBe(first);
    expect(await resolveCommit({ repository }, 'no-such-branch')).toBeNull();
  });

  it('resolves a branch before a tag of the same name, then tags and shas', async () => {
    git('tag', 'release', first);
    git('branch', 'release', second);
    git('tag', 'only-a-tag', first);
    const reader = new BlobReader({ repository });
    try {
      // git's own rule (rev-parse) would warn that the name is ambiguous and take the tag.
      expect(await resolveBranchFirst(reader, 'release')).toBe(second);
      expect(await resolveBranchFirst(reader, 'only-a-tag')).toBe(first);
      expect(await resolveBranchFirst(reader, first)).toBe(first);
      expect(await resolveBranchFirst(reader, 'no-such-ref')).toBeNull();
      await expect(resolveBranchFirst(reader, 'a..b')).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    } finally {
      reader.close();
      git('tag', '-d', 'release', 'only-a-tag');
      git('branch', '-D', 'release');
    }
  });

  it("lists a commit's files with their blobs and sizes, paths with spaces included", async () => {
    const files = await listFiles({ repository }, first);
    expect(files.map((file) => [file.path, file.size])).toEqual([
      ['docs/space name.md', 8],
      ['src/a.ts', 20],
      ['src/b.ts', 20],
    ]);
    expect(files.every((file) => /^[0-9a-f]{40}$/.test(file.blob))).toBe(true);
  });

  it('sizes the entries asked for (each blob once), as the long listing does', async () => {
    const long = await listFiles({ repository }, first);
    const paths = long.map(({ path, blob, mode }) => ({ path, blob, mode }));
    expect(paths.map((entry) => entry.path)).toEqual(['docs/space name.md', 'src/a.ts', 'src/b.ts']);
    // src/a.ts and src/b.ts differ; the same blob twice (a copy) is sized once and given to both.
    const asked = [paths[1], paths[0], { ...paths[0], path: 'copy.md' }];
    const sized = await withSizes({ repository }, asked);
    expect(sized.map((entry) => [entry.path, entry.size])).toEqual([
      ['src/a.ts', 20],
      ['docs/space name.md', 8],
      ['copy.md', 8],
    ]);
    expect(await withSizes({ repository }, paths)).toEqual(long);
    expect(await withSizes({ repository }, [])).toEqual([]);
  });

  it('lists regular files only: no symlink, no submodule; a tab in a path is kept; so do the changes between two commits', async () => {
    const other = mkdtempSync(path.join(os.tmpdir(), 'duo-git-'));
    const run = (...args: string[]) => execFileSync('git', ['-C', other, ...args], { encoding: 'utf8' }).trim();
    /** Commits the work tree with a submodule at `submodule` (`add -A` drops it: it has no work tree here). */
    const commitWith = (submodule: string, message: string) => {
      run('add', '-A');
      run('update-index', '--add', '--cacheinfo', `160000,${submodule},vendored-module`);
      run('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', message);
      return run('rev-parse', 'HEAD');
    };
    try {
      run('init', '-q', '-b', 'main');
      writeFileSync(path.join(other, 'code.ts'), 'export {};\n');
      writeFileSync(path.join(other, 'tab\tname.md'), '# t\n');
      symlinkSync('code.ts', path.join(other, 'link.ts'));
      const commit = commitWith('1'.repeat(40), 'mixed');
      const files = await listFiles({ repository: other }, commit);
      expect(files.map((file) => [file.path, file.mode, file.size])).toEqual([
        ['code.ts', '100644', 11],
        ['tab\tname.md', '100644', 4],
      ]);
      // The next commit changes every kind of entry: what the diff names, with the new regular files
      // as the listing has them, is what an incremental run reads.
      writeFileSync(path.join(other, 'code.ts'), 'export const changed = 1;\n');
      unlinkSync(path.join(other, 'tab\tname.md'));
      unlinkSync(path.join(other, 'link.ts'));
      symlinkSync('tab\tname.md', path.join(other, 'link.ts'));
      writeFileSync(path.join(other, 'script.sh'), 'echo hi\n');
      writeFileSync(path.join(other, 'was-a-file'), 'x\n');
      writeFileSync(path.join(other, '.gitattributes'), '*.gen.ts linguist-generated\n');
      const base = commitWith('1'.repeat(40), 'base');
      chmodSync(path.join(other, 'script.sh'), 0o755);
      unlinkSync(path.join(other, 'was-a-file'));
      mkdirSync(path.join(other, 'was-a-file'));
      writeFileSync(path.join(other, 'was-a-file', 'inner.ts'), 'export {};\n');
      mkdirSync(path.join(other, 'deep', 'er'), { recursive: true });
      writeFileSync(path.join(other, 'deep', 'er', 'ünï.ts'), 'export const u = 1;\n');
      writeFileSync(path.join(other, 'code.ts'), 'export const again = 2;\n');
      unlinkSync(path.join(other, 'link.ts'));
      writeFileSync(path.join(other, 'link.ts'), 'now a file\n');
      symlinkSync('code.ts', path.join(other, 'new-link.ts'));
      const next = commitWith('2'.repeat(40), 'every kind');
      const changes = await changedEntries({ repository: other }, base, next);
      // The statuses are git's own (`--name-status`, renames as a delete and an add; T is a modification).
      const nameStatus = run('diff', '--name-status', '-z', '--no-renames', base, next).split('\0').filter(Boolean);
      const statusOf = { A: 'added', D: 'deleted' } as Record<string, string>;
      const gitChanges = [];
      for (let index = 0; index + 1 < nameStatus.length; index += 2)
        gitChanges.push({ status: statusOf[nameStatus[index]] ?? 'modified', path: nameStatus[index + 1] });
      expect(changes.map(({ status, path }) => ({ status, path }))).toEqual(gitChanges);
      const listed = (await listFiles({ repository: other }, next)).map(({ path, blob, mode }) => ({ path, blob, mode }));
      const changed = new Set(changes.filter((change) => change.status !== 'deleted').map((change) => change.path));
      expect(changes.flatMap((change) => (change.entry ? [change.entry] : []))).toEqual(listed.filter((entry) => changed.has(entry.path)));
      expect(changes.map((change) => [change.status, change.path, change.entry?.mode ?? null])).toEqual([
        ['modified', 'code.ts', '100644'],
        ['added', 'deep/er/ünï.ts', '100644'],
        ['modified', 'link.ts', '100644'],
        ['added', 'new-link.ts', null],
        ['modified', 'script.sh', '100755'],
        ['modified', 'vendored-module', null],
        ['deleted', 'was-a-file', null],
        ['added', 'was-a-file/inner.ts', '100644'],
      ]);
      // The attributes file at the top of the tree, as the listing has it; a symlink or a directory is none.
      const reader = new BlobReader({ repository: other });
      try {
        expect(await reader.rootFile(next, '.gitattributes')).toEqual(listed.find((entry) => entry.path === '.gitattributes'));
        expect(await reader.rootFile(next, 'link.ts')).toEqual(listed.find((entry) => entry.path === 'link.ts'));
        expect(await reader.rootFile(base, 'link.ts')).toBeNull();
        expect(await reader.rootFile(next, 'was-a-file')).toBeNull();
        expect(await reader.rootFile(next, 'vendored-module')).toBeNull();
        expect(await reader.rootFile(next, 'absent')).toBeNull();
      } finally {
        reader.close();
      }
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('refuses to size a blob the repository does not have', async () => {
    await expect(withSizes({ repository }, [{ path: 'gone.ts', blob: 'e'.repeat(40), mode: '100644' }])).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringMatching(/found no blob e{40} \(gone\.ts\)/),
    });
    await expect(withSizes({ repository }, [{ path: 'x', blob: 'HEAD', mode: '100644' }])).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
  });

  it('lists the files changed between two commits', async () => {
    expect((await changedEntries({ repository }, first, second)).map(({ status, path }) => ({ status, path }))).toEqual([
      { status: 'modified', path: 'src/a.ts' },
      { status: 'deleted', path: 'src/b.ts' },
      { status: 'added', path: 'src/c.ts' },
    ]);
  });

  it('tells whether history was rewritten', async () => {
    expect(await isAncestor({ repository }, first, second)).toBe(true);
    expect(await isAncestor({ repository }, second, first)).toBe(false);
  });

  it("answers refs and ancestry through a blob reader's one process, as rev-parse and merge-base do", async () => {
    // More history beside main (main itself does not move): a chain, a merge, an orphan, an annotated tag.
    const tree = git('rev-parse', `${second}^{tree}`);
    const commit = (...args: string[]) => git('commit-tree', tree, ...args);
    const third = commit('-p', second, '-m', 'third');
    const fourth = commit('-p', third, '-m', 'fourth');
    const side = commit('-p', first, '-m', 'side');
    const merge = commit('-p', fourth, '-p', side, '-m', 'merge');
    const orphan = commit('-m', 'orphan');
    git('tag', '-a', 'v2', '-m', 'annotated', second);
    // A commit whose parent the repository lacks, as at a shallow clone's edge.
    const broken = execFileSync('git', ['-C', repository, 'hash-object', '-t', 'commit', '-w', '--stdin'], {
      input: `tree ${tree}\nparent ${'e'.repeat(40)}\nauthor t <t@example.com> 0 +0000\ncommitter t <t@example.com> 0 +0000\n\nedge\n`,
      encoding: 'utf8',
    }).trim();
    const reader = new BlobReader({ repository });
    try {
      const revParse = (ref: string) => {
        try {
          return git('rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`) || null;
        } catch {
          return null;
        }
      };
      for (const ref of ['main', 'refs/heads/main', first, 'v2', 'no-such-branch', 'refs/heads/no-such', 'e'.repeat(40)]) {
        expect(await reader.resolveCommit(ref)).toBe(revParse(ref));
        expect(await resolveCommit({ repository }, ref)).toBe(revParse(ref));
      }
      expect(await reader.resolveCommit('v2')).toBe(second);
      expect(await reader.resolveCommit('main')).toBe(second);
      await expect(reader.resolveCommit('a..b')).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
      const pairs = [
        [first, second],
        [second, first],
        [first, merge],
        [side, merge],
        [merge, side],
        [orphan, merge],
        [merge, orphan],
        [merge, merge],
        [third, fourth],
      ];
      for (const [ancestor, descendant] of pairs)
        expect([ancestor, descendant, await reader.reachable(ancestor, descendant)]).toEqual([
          ancestor,
          descendant,
          await isAncestor({ repository }, ancestor, descendant),
        ]);
      // Undecided, and saying so, past its limit or at a commit the repository lacks.
      expect(await reader.reachable(first, merge, 1)).toBeNull();
      expect(await reader.reachable(fourth, merge, 1)).toBe(true);
      expect(await reader.reachable(first, broken)).toBeNull();
      await expect(reader.reachable('main', second)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    } finally {
      reader.close();
    }
  });

  it('streams many blobs through one cat-file, in order, with null for a missing one', async () => {
    const files = await listFiles({ repository }, second);
    const missing = '0'.repeat(40);
    const read: Array<[string, string | null]> = [];
    for await (const { blob, content } of readBlobs({ repository }, [...files.map((file) => file.blob), missing]))
      read.push([blob, content?.toString('utf8') ?? null]);
    expect(read.map(([, content]) => content)).toEqual(['# hello\n', 'export const a = 10;\n', 'export const c = 3;\n', null]);
    expect(read.at(-1)![0]).toBe(missing);
  });

  it('reads many batches of blobs through one git process, in order, missing ones as null', async () => {
    const files = await listFiles({ repository }, second);
    const missing = 'f'.repeat(40);
    const reader = new BlobReader({ repository });
    try {
      const first = await reader.read([files[1].blob, missing, files[0].blob]);
      expect(first.map(({ blob }) => blob)).toEqual([files[1].blob, missing, files[0].blob]);
      expect(first.map(({ content }) => content?.toString('utf8') ?? null)).toEqual(['export const a = 10;\n', null, '# hello\n']);
      const [again] = await reader.read([files[2].blob]);
      expect(again.content?.toString('utf8')).toBe('export const c = 3;\n');
      await expect(reader.read(['HEAD'])).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    } finally {
      reader.close();
    }
    await expect(reader.read([files[0].blob])).rejects.toThrow(/closed/);
  });

  it('fails the reads of a blob reader whose repository cannot be read', async () => {
    const reader = new BlobReader({ repository: path.join(repository, 'nope') });
    await expect(reader.read(['a'.repeat(40)])).rejects.toThrow(/git cat-file stopped/);
    reader.close();
  });

  it('refuses ids that are not shas before running git', async () => {
    await expect(listFiles({ repository }, 'HEAD')).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(changedEntries({ repository }, 'main', second)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('reports a repository that cannot be read', async () => {
    await expect(listFiles({ repository: path.join(repository, 'nope') }, first)).rejects.toThrow(/git ls-tree failed/);
  });
});
