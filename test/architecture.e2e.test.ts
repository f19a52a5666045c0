import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths';

// The layer rules of docs/architecture.md, run by dependency-cruiser as `npm run lint` runs them.
const DEPCRUISE = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = path.join(PROJECT_ROOT, '.dependency-cruiser.cjs');

function cruise(cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(DEPCRUISE, ['src', '--config', CONFIG, '--output-type', 'err'], { cwd, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

describe('architecture', () => {
  it('has no import that runs back up a layer, and no cycle', async () => {
    const { code, output } = await cruise(PROJECT_ROOT);
    expect(output).toMatch(/no dependency violations found/);
    expect(code).toBe(0);
  });

  describe('the rules bite', () => {
    let root: string;
    beforeAll(() => {
      root = mkdtempSync(path.join(os.tmpdir(), 'duo-architecture-'));
      writeFileSync(path.join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true } }));
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    const tree = (files: Record<string, string>) => {
      rmSync(path.join(root, 'src'), { recursive: true, force: true });
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        writeFileSync(path.join(root, file), text);
      }
    };

    it.each([
      [
        'foundation-stays-below',
        { 'src/config.ts': "import { x } from './chat/talk';\nexport const y = x;\n", 'src/chat/talk.ts': 'export const x = 1;\n' },
      ],
      [
        'features-below-edges',
        {
          'src/chat/talk.ts': "import { gid } from '../graphql/ids';\nexport const x = gid;\n",
          'src/graphql/ids.ts': 'export const gid = 1;\n',
        },
      ],
      [
        'graphql-edge-below-resolvers',
        {
          'src/graphql/schema.ts': "import { r } from '../resolvers/a.resolver';\nexport const s = r;\n",
          'src/resolvers/a.resolver.ts': 'export const r = 1;\n',
        },
      ],
      [
        'chat-searches-through-the-tool',
        {
          'src/chat/talk.ts': "import { s } from '../search/search-code';\nexport const x = s;\n",
          'src/search/search-code.ts': 'export const s = 1;\n',
        },
      ],
      [
        'runtime-not-training',
        {
          'src/chat/talk.ts': "import { t } from '../gatekeeper/training/train';\nexport const x = t;\n",
          'src/gatekeeper/training/train.ts': 'export const t = 1;\n',
        },
      ],
      [
        'no-circular',
        {
          'src/chat/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
          'src/chat/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
        },
      ],
    ])('%s', async (rule, files) => {
      tree(files);
      const { code, output } = await cruise(root);
      expect(output).toContain(rule);
      expect(code).not.toBe(0);
    });
  });
});
