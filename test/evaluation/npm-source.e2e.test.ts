import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { materializeNpmPackage } from '../../src/evaluation/npm-source';
import { describeWithNpmRegistry } from '../helpers/network';

// Real npm pack against the registry, real tar and git: ms@2.1.3 is four small files.
describeWithNpmRegistry('materializeNpmPackage (needs the npm registry)', () => {
  const SPEC = 'ms@2.1.3';
  let root: string;
  const git = (repository: string, ...args: string[]) => execFileSync('git', ['-C', repository, ...args], { encoding: 'utf8' }).trim();

  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'duo-npm-source-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('packs, unpacks without the package/ folder and commits every file with the spec as message', async () => {
    const directory = path.join(root, 'nested', 'ms');
    const result = await materializeNpmPackage({ spec: SPEC, directory });

    expect(result.repository).toBe(directory);
    expect(result.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git(directory, 'rev-parse', 'HEAD')).toBe(result.commit);
    expect(git(directory, 'log', '--format=%s|%an|%ae')).toBe(`${SPEC}|eval|eval@localhost`);
    expect(git(directory, 'status', '--porcelain')).toBe('');

    const files = git(directory, 'ls-files').split('\n');
    expect(files).toEqual(['index.js', 'license.md', 'package.json', 'readme.md']);
    expect(existsSync(path.join(directory, 'package'))).toBe(false);
    expect(result.files).toBe(4);
    expect(result.bytes).toBe(files.reduce((sum, file) => sum + statSync(path.join(directory, file)).size, 0));
    expect(JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8'))).toMatchObject({ name: 'ms', version: '2.1.3' });
    expect(readFileSync(path.join(directory, 'index.js'), 'utf8')).toContain('function parse(str)');
  }, 120_000);

  it('reuses a repository already holding the spec instead of packing again', async () => {
    const directory = path.join(root, 'cached');
    const first = await materializeNpmPackage({ spec: SPEC, directory });
    writeFileSync(path.join(directory, 'marker.txt'), 'left alone\n');

    const second = await materializeNpmPackage({ spec: SPEC, directory });

    expect(second).toEqual(first);
    expect(readFileSync(path.join(directory, 'marker.txt'), 'utf8')).toBe('left alone\n');
  }, 120_000);

  it('gives the same commit for the same tarball anywhere', async () => {
    const one = await materializeNpmPackage({ spec: SPEC, directory: path.join(root, 'one') });
    const two = await materializeNpmPackage({ spec: SPEC, directory: path.join(root, 'two') });
    expect(two.commit).toBe(one.commit);
  }, 120_000);

  it('replaces a repository it made for another spec', async () => {
    const directory = path.join(root, 'replaced');
    const old = await materializeNpmPackage({ spec: 'ms@2.1.2', directory });
    const fresh = await materializeNpmPackage({ spec: SPEC, directory });

    expect(fresh.commit).not.toBe(old.commit);
    expect(git(directory, 'log', '--format=%s')).toBe(SPEC);
    expect(JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')).version).toBe('2.1.3');
  }, 120_000);

  it('refuses to overwrite a directory it did not make', async () => {
    const directory = path.join(root, 'foreign');
    mkdirSync(directory);
    writeFileSync(path.join(directory, 'notes.txt'), 'mine\n');

    await expect(materializeNpmPackage({ spec: SPEC, directory })).rejects.toThrow(/refusing to overwrite/);
    expect(readFileSync(path.join(directory, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it.each(['', '--registry=http://evil.example', 'ms@2.1.3\nother'])('refuses the spec %j', async (spec) => {
    await expect(materializeNpmPackage({ spec, directory: path.join(root, 'never') })).rejects.toThrow(/is not a package spec/);
    expect(existsSync(path.join(root, 'never'))).toBe(false);
  });

  it('reports a spec npm cannot pack', async () => {
    const directory = path.join(root, 'missing');
    await expect(materializeNpmPackage({ spec: 'ms@0.0.0-does-not-exist', directory })).rejects.toThrow(/npm pack failed/);
    expect(existsSync(directory)).toBe(false);
  }, 120_000);
});
