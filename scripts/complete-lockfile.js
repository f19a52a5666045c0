#!/usr/bin/env node
// Our package registry serves only the platform binaries our machines use, so `npm install`
// leaves the other platforms' optional packages (@swc/core-darwin-arm64, ...) out of
// package-lock.json, and `npm ci` then refuses the lockfile as out of sync. This adds an entry for
// each such optional package with the platform its name says, so `npm ci` accepts the lockfile and
// skips them on machines of another platform, as it would with a complete lockfile.
// Run after `npm install` changed the lockfile: node scripts/complete-lockfile.js
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = {
  arm64: 'arm64',
  x64: 'x64',
  ia32: 'ia32',
  arm: 'arm',
  ppc64: 'ppc64',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  'arm-eabi': 'arm',
  'arm-gnueabihf': 'arm',
  'arm-musleabihf': 'arm',
};

function platformOf(name) {
  const base = name.split('/').pop();
  const os = OS.find((candidate) => base.includes(`-${candidate}-`) || base.endsWith(`-${candidate}`));
  const cpuKey = Object.keys(CPU)
    .sort((a, b) => b.length - a.length)
    .find((candidate) => new RegExp(`-${candidate}(-|$)`).test(base));
  const entry = {};
  // A name that tells no platform gets one no machine has: it was missing from the registry anyway.
  entry.os = [os ?? 'none'];
  if (cpuKey) entry.cpu = [CPU[cpuKey]];
  if (os === 'linux') entry.libc = [/musl/.test(base) ? 'musl' : 'glibc'];
  return entry;
}

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `${location ? `${location}/` : ''}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (packages[target] || packages[hoisted]) continue;
    packages[hoisted] = { version: spec.replace(/^[\^~=]/, ''), dev: entry.dev || undefined, optional: true, ...platformOf(name) };
    added += 1;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} entries for other platforms' optional packages`);
