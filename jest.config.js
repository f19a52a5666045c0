const fs = require('node:fs');
const swcConfig = JSON.parse(fs.readFileSync(`${__dirname}/.swcrc`, 'utf8'));

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // ignoreDynamic keeps import() as import(), so ESM-only packages (@anycable/core) load through
  // Jest's ESM support (node --experimental-vm-modules, see the test script) instead of require().
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcConfig, module: { ...swcConfig.module, ignoreDynamic: true }, swcrc: false }] },
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  setupFiles: ['reflect-metadata'],
  testTimeout: 30000,
  // Two cores: two test files at a time, each with its own database and Redis prefix.
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
