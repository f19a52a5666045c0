#!/usr/bin/env node
// Runs `prisma generate` without the schema engine download that our machines cannot reach:
// Prisma 7 does not need the engine to generate, it only checks that the variable names a file.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= __filename;
env.PRISMA_HIDE_UPDATE_MESSAGE = '1';
env.CHECKPOINT_DISABLE = '1';
const cli = require.resolve('prisma/build/index.js');
const result = spawnSync(process.execPath, [cli, 'generate', '--schema', path.join(__dirname, '..', 'prisma', 'schema.prisma')], {
  env,
  stdio: ['ignore', 'inherit', 'inherit'],
});
process.exit(result.status ?? 1);
