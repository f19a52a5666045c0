#!/usr/bin/env node
// Builds the Duo Chat page (web/) with Vite into dist/web, or the directory given as the first
// argument. `npm run build` runs it; the browser test builds into a temporary directory.
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
/** The page's path on the service (src/http/duo-chat-page.ts serves it there). */
const BASE = '/-/duo-chat/';

/**
 * Vite's logger, but LightningCSS's complaints about @gitlab/ui's old Internet Explorer hacks (`*zoom:1` and the
 * like, dropped by errorRecovery) become one line: eight multi-line excerpts at every `npm start` read like errors.
 */
function quietCssLogger(createLogger, level) {
  const logger = createLogger(level);
  const warn = logger.warn.bind(logger);
  let dropped = 0;
  logger.warn = (message, options) => {
    if (String(message).includes('[lightningcss minify]')) dropped += 1;
    else warn(message, options);
  };
  return {
    logger,
    summary: () => dropped && `web: LightningCSS dropped ${dropped} Internet Explorer hacks from @gitlab/ui's CSS (expected)`,
  };
}

async function buildWeb(outDir = path.join(ROOT, 'dist', 'web'), options = {}) {
  const { build, createLogger } = await import('vite');
  const { logger, summary } = quietCssLogger(createLogger, options.logLevel ?? 'warn');
  await build({
    root: path.join(ROOT, 'web'),
    base: BASE,
    configFile: false,
    customLogger: logger,
    // @gitlab/ui's CSS carries old IE hacks (`*zoom`) that LightningCSS refuses; it drops them instead.
    css: { lightningcss: { errorRecovery: true } },
    mode: 'production',
    // Vue 2's ES build, with its production checks compiled out.
    resolve: { alias: [{ find: /^vue$/, replacement: 'vue/dist/vue.runtime.esm.js' }] },
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    build: { outDir, emptyOutDir: true, chunkSizeWarningLimit: 2000, reportCompressedSize: false },
  });
  if (summary() && options.logLevel !== 'silent') console.log(summary());
  return outDir;
}

module.exports = { buildWeb, BASE };

if (require.main === module) {
  // `npm run build` (and so `npm start`): warnings and errors only, not every one of the ~200 files written.
  buildWeb(process.argv[2] ? path.resolve(process.argv[2]) : undefined, { logLevel: 'warn' }).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
