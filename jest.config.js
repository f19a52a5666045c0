const fs = require('node:fs');
const swcConfig = JSON.parse(fs.readFileSync(`${__dirname}/.swcrc`, 'utf8'));

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcConfig, swcrc: false }] },
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  setupFiles: ['reflect-metadata'],
  testTimeout: 30000,
  // Two cores: two test files at a time, each with its own database and Redis prefix.
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
