// The TypeScript loader of worker threads started from source (tests, benches, `npm run dev`):
// @swc/core's transform, with the options tsconfig.json gives. @swc-node/register, which the main
// thread uses, loads TypeScript's compiler to read tsconfig.json: about 40 MiB in every thread.
// Compiled (dist/), threads run JavaScript and load neither.
const fs = require('node:fs');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

const options = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    target: 'es2022',
    transform: { legacyDecorator: true, decoratorMetadata: true },
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
  swcrc: false,
  configFile: false,
};

Module._extensions['.ts'] = function compileTypeScript(module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), { ...options, filename });
  module._compile(code, filename);
};
