// Lint for every package and app: typescript-eslint's type-aware recommended rules and import rules.
// Run by `npm run lint` and by `npm test` (scripts/test.mjs); see docs/architecture.md, "Lint".
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const sources = ['packages/*/src/**/*.ts', 'apps/*/src/**/*.ts'];
const testSources = [
  '**/*.test.ts',
  '**/src/testing/**/*.ts',
  '**/src/testing.ts',
  '**/src/test-fixtures.ts',
  '**/src/test-support.ts',
];

export default defineConfig(
  // The GUI's API types are generated from the OpenAPI document (apps/gui/scripts/api-types.mjs).
  { ignores: ['**/dist/**', '**/node_modules/**', 'apps/gui/src/api/schema.d.ts'] },
  {
    files: sources,
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    plugins: { 'import-x': importX },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    settings: {
      // Relative imports name the built `.js` file; the TypeScript resolver finds the `.ts` source.
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: ['packages/*/tsconfig.json', 'apps/*/tsconfig.json'], noWarnOnMultipleProjects: true })],
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      // Cycles between a package's own files count too. Modules in node_modules cannot import ours, so
      // the search for a cycle does not enter them.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/first': 'error',
      'import-x/no-duplicates': 'error',
      'import-x/order': [
        'error',
        {
          // node: builtins, then packages (@mesh/* among them), then the package's own files, in one block.
          groups: ['builtin', ['external', 'internal'], ['parent', 'sibling', 'index']],
          'newlines-between': 'never',
        },
      ],
      // Leaving out properties by destructuring (`const { creationTime, ...rest } = meta`) and
      // parameters a signature requires but one implementation ignores (`_spec`) are deliberate.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read response bodies, parsed JSON and recorded Envoy configurations as `any`; checking
    // every such access would mean a type per response shape. The other rules stay on for tests.
    files: testSources,
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
