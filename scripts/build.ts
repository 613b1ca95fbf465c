import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";

// `npm run build`: compiles every process to JavaScript, one directory per process:
//   dist/<process>/main.js (+ chunks)  every @platform/* module it uses, bundled
//   dist/<process>/migrations/<pkg>/   the SQL migrations of the packages it migrates
// Third-party packages stay external (node_modules), so an image needs its own dist directory
// and the production dependencies only: no TypeScript sources, no tsx. Code splitting keeps
// the sources' load order: each main starts telemetry, then imports the rest dynamically, and
// the instrumented clients (pg, kafkajs, redis, http) must load after that.
//   dist/console/                      the developer console the gateway serves at /console
//                                      (scripts/build-console.ts), with the gateway and embedded
// Usage: node --import tsx scripts/build.ts [process ...|console]   (default: all)

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..");

/** Process name → entry point. The images run `node dist/<process>/main.js`. */
export const PROCESSES: Record<string, string> = {
  gateway: "gateway/src/main.ts",
  identity: "services/identity/src/main.ts",
  scheduling: "services/scheduling/src/main.ts",
  "crm-data": "services/crm-data/src/main.ts",
  revenue: "services/revenue/src/main.ts",
  analytics: "services/analytics/src/main.ts",
  webhooks: "services/webhooks/src/main.ts",
  "webhooks-delivery": "services/webhooks/src/delivery-main.ts",
  "request-logs": "services/request-logs/src/main.ts",
  // `npm start`'s embedded platform, for running it without tsx.
  embedded: "runtime/src/embedded.ts",
};

/**
 * Worker threads a process starts, built as entries of their own beside its main.js: the code
 * that starts one finds it as `./<name>.js` beside its own chunk.
 */
const WORKERS: Record<string, Record<string, string>> = {
  scheduling: { "sign-worker": "services/scheduling/src/application/sign-worker.ts" },
};

/** A package's migrations: `migrationsBeside("<name>", import.meta.url)` (libs/kit/src/migrate.ts). */
const MIGRATIONS_BESIDE = /migrationsBeside\(\s*("[^"]+")\s*,\s*import\.meta\.url\s*\)/g;

/**
 * Sources find their migrations next to their package (`../migrations` from src/). Bundled,
 * `import.meta.url` is main.js, so each such call is given the copy under
 * dist/<process>/migrations/<package directory>/ instead, and the copies are recorded.
 */
function migrationsPlugin(copied: Set<string>): Plugin {
  return {
    name: "migrations",
    setup(b) {
      b.onLoad({ filter: /[\\/](libs|services)[\\/][^\\/]+[\\/]src[\\/][^\\/]+\.ts$/ }, (args) => {
        const source = readFileSync(args.path, "utf8");
        if (!source.match(MIGRATIONS_BESIDE)) return undefined;
        const pkgDir = resolve(dirname(args.path), "..");
        const name = relative(ROOT, pkgDir).replaceAll("\\", "/").replace("/", "-");
        copied.add(pkgDir);
        return {
          contents: source.replace(
            MIGRATIONS_BESIDE,
            (_call, sourceName: string) => `migrationsBeside(${sourceName}, import.meta.url, "./migrations/${name}")`,
          ),
          loader: "ts",
        };
      });
    },
  };
}

/**
 * What every process reports as its build (libs/kit/src/build-info.ts): the root package.json's
 * version, and the commit: BUILD_COMMIT when given (the image build has no .git), else
 * `git rev-parse HEAD`, else "unknown".
 */
function buildStamp(): { version: string; commit: string } {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version?: string };
  let commit = process.env.BUILD_COMMIT?.trim() || "unknown";
  if (commit === "unknown") {
    try {
      commit = execFileSync("git", ["rev-parse", "HEAD"], {
        cwd: ROOT,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim();
    } catch {
      // Not a checkout: the commit stays unknown.
    }
  }
  return { version: pkg.version ?? "unknown", commit };
}

/** Bare imports other than our workspace packages stay external (resolved from node_modules). */
const externalPackages: Plugin = {
  name: "external-packages",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("@platform/") || args.path.startsWith("node:")) return undefined;
      return { path: args.path, external: true };
    });
  },
};

async function buildProcess(
  name: string,
  entry: string,
  stamp: { version: string; commit: string },
): Promise<{ name: string; bytes: number; ms: number }> {
  const started = performance.now();
  const outdir = join(ROOT, "dist", name);
  rmSync(outdir, { recursive: true, force: true });
  const copied = new Set<string>();
  await build({
    entryPoints: {
      main: join(ROOT, entry),
      ...Object.fromEntries(Object.entries(WORKERS[name] ?? {}).map(([worker, path]) => [worker, join(ROOT, path)])),
    },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    // No keepNames: nothing is minified, so V8 names every function and class from its source
    // already, and stack traces (source-mapped in the images) show the source's names. keepNames
    // only matters where the bundle renames a clashing declaration (`build2`), and it costs a
    // defineProperty call for every closure created, per call: 0.6–1.5 % of the gateway's and
    // identity's CPU under load (docs/benchmarks/node.md, "AsyncLocalStorage without async_hooks").
    keepNames: false,
    logLevel: "warning",
    define: { __PLATFORM_BUILD__: JSON.stringify(stamp) },
    plugins: [externalPackages, migrationsPlugin(copied)],
  });
  for (const pkgDir of copied) {
    const name = relative(ROOT, pkgDir).replaceAll("\\", "/").replace("/", "-");
    cpSync(join(pkgDir, "migrations"), join(outdir, "migrations", name), { recursive: true });
  }
  // Node reads the chunks as ES modules without a "type" field up the tree (the image has none).
  writeFileSync(join(outdir, "package.json"), `${JSON.stringify({ type: "module", private: true }, null, 2)}\n`);
  return { name, bytes: statSync(join(outdir, "main.js")).size, ms: Math.round(performance.now() - started) };
}

// Run as a script (npm run build); the benches import PROCESSES only.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const wanted = process.argv.slice(2);
  for (const w of wanted) {
    if (!(w in PROCESSES) && w !== "console") {
      console.error(`unknown process '${w}'; the processes are: ${Object.keys(PROCESSES).join(", ")}, and console`);
      process.exit(2);
    }
  }
  mkdirSync(join(ROOT, "dist"), { recursive: true });
  const stamp = buildStamp();
  for (const [name, entry] of Object.entries(PROCESSES)) {
    if (wanted.length > 0 && !wanted.includes(name)) continue;
    if (!existsSync(join(ROOT, entry))) throw new Error(`entry point ${entry} of ${name} is missing`);
    const r = await buildProcess(name, entry, stamp);
    console.log(`built dist/${r.name}/main.js (${(r.bytes / 1024).toFixed(0)} KiB entry) in ${r.ms} ms`);
  }
  // The processes that serve the console get its build beside theirs (gateway/src/console.ts).
  if (wanted.length === 0 || wanted.some((w) => w === "console" || w === "gateway" || w === "embedded")) {
    // Loaded here only: the benches and check-imports import this file for PROCESSES alone.
    const { buildConsole } = await import("./build-console.js");
    const r = await buildConsole();
    console.log(`built dist/console (${(r.bytes / 1024).toFixed(0)} KiB of script and styles) in ${r.ms} ms`);
  }
}
