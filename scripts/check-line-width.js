#!/usr/bin/env node
// Prettier wraps code but leaves long comments and strings alone; this makes sure no line of code
// tracked by git (or about to be) runs past Prettier's printWidth all the same. Test fixtures (files under
// a fixtures/ folder) are data, kept as their languages write them.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const width = JSON.parse(fs.readFileSync(path.join(root, '.prettierrc.json'), 'utf8')).printWidth;
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.tsx', '*.js', '*.mjs', '*.cjs'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file && !file.startsWith('src/db/generated/') && !file.includes('/fixtures/') && fs.existsSync(path.join(root, file)));

const long = [];
for (const file of files) {
  const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  lines.forEach((line, index) => {
    if (line.length > width) long.push(`${file}:${index + 1}: ${line.length} characters`);
  });
}
if (long.length > 0) {
  console.error(`${long.length} lines are longer than ${width} characters (Prettier's printWidth):\n${long.join('\n')}`);
  process.exit(1);
}
console.log(`line width: every line of ${files.length} files fits in ${width} characters`);
