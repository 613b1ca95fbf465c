import { defineConfig } from "vitest/config";

// Two projects: `unit` needs nothing but Node (PGlite, in-process bus); `infra` needs the
// real Postgres, Redis and Kafka that .ci/run starts.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          // Both cores: vitest's default leaves one of two idle (CPUs − 1), which doubled CI's time.
          maxWorkers: 2,
          // Files share their worker's modules: each file importing the whole graph afresh was
          // ~1 s a file, and half of all the suite's time. Nothing here leans on a clean module
          // state; the suite passes in shuffled file orders (README, "Tests").
          isolate: false,
          include: ["{libs,gateway,services,cli,clients,runtime,deploy,console}/**/*.test.ts"],
          exclude: ["**/node_modules/**", "**/*.infra.test.ts", "**/*.browser.test.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // One initdb for the whole run: every embedded database starts from its copy.
          globalSetup: ["libs/kit/test-support/pglite-template.ts"],
        },
      },
      {
        // The developer console in Debian's chromium (playwright-core) against the embedded
        // runtime: `npm run test:console` (scripts/chromium.sh installs chromium when missing).
        test: {
          name: "browser",
          include: ["console/test/**/*.browser.test.ts"],
          exclude: ["**/node_modules/**"],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "infra",
          include: ["{libs,gateway,services,cli,runtime,test}/**/*.infra.test.ts"],
          exclude: ["**/node_modules/**"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          globalSetup: ["libs/kit/test-support/pglite-template.ts"],
        },
      },
    ],
  },
});
