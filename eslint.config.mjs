// ESLint with type information: the rules that catch real faults in this code base (promises
// left floating or misused, `any` leaking through), not style; Prettier owns the layout.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/db/generated/**', '.data/**', 'coverage/**', 'web/**'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      // Unused parameters and destructured leftovers are named with a leading underscore on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      // Plugin hooks and interface methods are async by contract, awaited or not.
      '@typescript-eslint/require-await': 'off',
      // Inputs are checked for NUL and other control characters deliberately.
      'no-control-regex': 'off',
      // graphql-js's OperationTypeNode is a string enum compared with its own values.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
    },
  },
  {
    // Tests assert on JSON bodies and mock payloads read as `any`; expect() is their type check.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
