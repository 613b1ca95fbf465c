import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

// The developer console (console/src: Preact + wouter-preact) built into dist/console/:
//   index.html                 the page, naming the assets below (served for /console and its routes)
//   assets/main-<hash>.js      the app, minified, one file
//   assets/styles-<hash>.css   its stylesheet
// Hashed names: the gateway serves assets as immutable, the page as no-cache (gateway/src/console.ts).
// `npm run build` builds it with the processes; `npm start` runs this with --if-stale first.
// Usage: node --import tsx scripts/build-console.ts [--if-stale]

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..");
export const CONSOLE_SOURCES = join(ROOT, "console/src");
export const CONSOLE_OUT = join(ROOT, "dist/console");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Why the build output needs building again, or undefined when it is current. */
export function consoleStaleReason(): string | undefined {
  const index = join(CONSOLE_OUT, "index.html");
  if (!existsSync(index)) return "not built yet";
  // The sources, this script and the lockfile (a new Preact) all make the output older.
  const inputs = Math.max(
    newestMtime(CONSOLE_SOURCES),
    statSync(new URL(import.meta.url)).mtimeMs,
    statSync(join(ROOT, "package-lock.json")).mtimeMs,
  );
  return statSync(index).mtimeMs < inputs ? "its sources changed" : undefined;
}

/** Builds into a fresh directory and swaps it in, so a running gateway never reads half a build. */
export async function buildConsole(): Promise<{ bytes: number; ms: number }> {
  const started = performance.now();
  // Loaded when building only: `--if-stale` on a current build (every npm start) stays quick.
  const { WEBHOOK_EVENT_CATALOG } = await import("@platform/contracts/webhooks");
  const staging = `${CONSOLE_OUT}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const result = await build({
    entryPoints: { main: join(CONSOLE_SOURCES, "main.tsx"), styles: join(CONSOLE_SOURCES, "styles.css") },
    outdir: join(staging, "assets"),
    entryNames: "[name]-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: ["es2022", "chrome110", "firefox110", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    // One home for the catalog: the contracts' list, the same the API documents and checks.
    define: { __EVENT_CATALOG__: JSON.stringify(WEBHOOK_EVENT_CATALOG) },
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((p) => p.startsWith("main-") && p.endsWith(".js"));
  const styles = outputs.find((p) => p.startsWith("styles-") && p.endsWith(".css"));
  if (!script || !styles) throw new Error(`console build produced ${outputs.join(", ")}`);
  const html = readFileSync(join(CONSOLE_SOURCES, "index.html"), "utf8")
    .replace("%SCRIPT%", script)
    .replace("%STYLES%", styles);
  writeFileSync(join(staging, "index.html"), html);
  mkdirSync(dirname(CONSOLE_OUT), { recursive: true });
  rmSync(CONSOLE_OUT, { recursive: true, force: true });
  renameSync(staging, CONSOLE_OUT);
  const bytes = statSync(join(CONSOLE_OUT, "assets", script)).size + statSync(join(CONSOLE_OUT, "assets", styles)).size;
  return { bytes, ms: Math.round(performance.now() - started) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  if (args.includes("--help")) {
    console.log(
      "Usage: node --import tsx scripts/build-console.ts [--if-stale]\n\nBuilds the developer console into dist/console (--if-stale: only when missing or older than console/src).",
    );
    process.exit(0);
  }
  const unknown = args.filter((a) => a !== "--if-stale");
  if (unknown.length > 0) {
    console.error(`unknown argument ${unknown[0]}; usage: build-console.ts [--if-stale]`);
    process.exit(2);
  }
  const reason = consoleStaleReason();
  if (args.includes("--if-stale") && reason === undefined) process.exit(0);
  console.log(`console: building dist/console (${reason ?? "asked to"})…`);
  const r = await buildConsole();
  console.log(`console: built dist/console (${(r.bytes / 1024).toFixed(0)} KiB of script and styles) in ${r.ms} ms`);
}
