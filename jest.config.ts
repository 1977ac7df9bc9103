import type { Config } from 'jest';

// Unit tests are `*.test.ts`; tests that need PostgreSQL and Redis are `*.integration-test.ts`.
// Both run by default; `pnpm test --selectProjects unit` runs only the first kind.
const common = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  // Prisma's generated client imports its siblings with `.js` suffixes.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', moduleResolution: 'node10', isolatedModules: true } }],
  },
};

const config: Config = {
  testTimeout: 30_000,
  // Jest's order, with the event catalogue test last (it reads what the other files recorded).
  testSequencer: '<rootDir>/test/test-sequencer.cjs',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,packages,test}/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,packages,test}/**/*.integration-test.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      // The first fails a test when an answer it received does not conform to the OpenAPI
      // document; the second notes the events each file recorded, for the event catalogue test.
      setupFilesAfterEnv: ['<rootDir>/test/response-conformance-setup.ts', '<rootDir>/test/emitted-events-setup.ts'],
    },
  ],
};

export default config;
