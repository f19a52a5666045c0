#!/usr/bin/env node
// Builds the Duo Chat page (web/) with Vite into dist/web, or the directory given as the first
// argument. `npm run build` runs it; the browser test builds into a temporary directory.
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
/** The page's path on the service (src/http/duo-chat-page.ts serves it there). */
const BASE = '/-/duo-chat/';

async function buildWeb(outDir = path.join(ROOT, 'dist', 'web'), options = {}) {
  const { build } = await import('vite');
  await build({
    root: path.join(ROOT, 'web'),
    base: BASE,
    configFile: false,
    logLevel: options.logLevel ?? 'warn',
    // @gitlab/ui's CSS carries old IE hacks (`*zoom`) that LightningCSS refuses; it drops them instead.
    css: { lightningcss: { errorRecovery: true } },
    mode: 'production',
    // Vue 2's ES build, with its production checks compiled out.
    resolve: { alias: [{ find: /^vue$/, replacement: 'vue/dist/vue.runtime.esm.js' }] },
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    build: { outDir, emptyOutDir: true, chunkSizeWarningLimit: 2000, reportCompressedSize: false },
  });
  return outDir;
}

module.exports = { buildWeb, BASE };

if (require.main === module) {
  buildWeb(process.argv[2] ? path.resolve(process.argv[2]) : undefined, { logLevel: 'info' }).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
