import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// Import boundaries. A later config block replaces an earlier one's options for the same rule
// rather than adding to them, so the two kinds of boundary use two rules, each set once per file:
// the core `no-restricted-imports` keeps relative imports inside their workspace, and
// typescript-eslint's copy of it says what a layer may import.

const SOURCES = '{ts,mts,cts,js,mjs,cjs}';
/** How many folders deep a file may sit inside apps/<name> or packages/<name>. */
const MAX_DEPTH = 8;

const BY_NAME =
  'Import another workspace by its package name (@booking/...), never by a relative path out of this one.';

/**
 * Files `depth` folders below the root of their workspace (apps/<name>, packages/<name>): a
 * relative import that climbs more than `depth` levels leaves the workspace. An app's tests may
 * import their own app's src/ relatively; anything else goes by package name.
 */
const insideTheWorkspace = (depth) => ({
  files: ['apps', 'packages'].map((kind) => `${kind}/*/${'*/'.repeat(depth)}*.${SOURCES}`),
  rules: {
    'no-restricted-imports': ['error', { patterns: [{ regex: `^(\\.\\./){${depth + 1},}`, message: BY_NAME }] }],
  },
});

const NO_TESTS = [
  { regex: '(^|/)test(/|$)', message: 'Code in src/ never imports a test folder.' },
  { group: ['@booking/test-kit', '@booking/test-kit/**'], message: 'Code in src/ never imports the test kit.' },
];

/** http/ holds what every route shares; features build on it, never the other way round. */
const NO_FEATURES = {
  regex: '^\\.\\./(?!http(/|$))',
  message: 'http/ imports no feature folder (nor app wiring): features import http/, not the reverse.',
};

export default defineConfig(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/coverage/**', 'packages/db/src/generated/**'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },

  // Relative imports stay inside their workspace.
  ...Array.from({ length: MAX_DEPTH + 1 }, (_, depth) => insideTheWorkspace(depth)),
  {
    // The repository root's own files (Jest set-up, benchmarks, scripts) reach apps and packages by name.
    files: [`*.${SOURCES}`, `test/**/*.${SOURCES}`, `bench/**/*.${SOURCES}`, `scripts/**/*.${SOURCES}`],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.{1,2}/)+(apps|packages)/', message: BY_NAME }] }],
    },
  },

  // What a layer may import.
  {
    files: [`apps/*/src/**/*.${SOURCES}`, `packages/*/src/**/*.${SOURCES}`],
    ignores: ['packages/test-kit/**', 'apps/api/src/http/**'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: NO_TESTS }] },
  },
  {
    files: [`apps/api/src/http/**/*.${SOURCES}`],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [NO_FEATURES, ...NO_TESTS] }] },
  },
  {
    // The Jest set-up files in test/ may take one light module of the kit without loading the app.
    files: [`apps/*/test/**/*.${SOURCES}`, `packages/*/test/**/*.${SOURCES}`, `bench/**/*.${SOURCES}`],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@booking/test-kit/**'], message: "Import the test kit from '@booking/test-kit'." }] },
      ],
    },
  },
  {
    // CommonJS files are loaded by tools with require, outside any TypeScript transform.
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
