import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    sequence: { shuffle: true },
    // Vitest's default is one worker per core less one: a single worker on the 2-core CI machines.
    // The integration files spend most of their time waiting on moto and child processes, so three
    // workers overlap that waiting (files isolate themselves by moto account and own fake API server).
    maxWorkers: 3,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/integration/**'],
          sequence: { shuffle: true },
          // Property tests and child-process CLI tests can take several seconds on a busy 2-core machine.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/moto/global-setup.ts'],
          // Fails a test during which a function made a call its synthesized role does not allow.
          setupFiles: ['test/integration/iam/no-denials.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
