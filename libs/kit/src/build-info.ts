import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Meter, metrics } from "@opentelemetry/api";

// What build a process is: the release version (the root package.json's, set by
// scripts/release.sh) and the git commit it was built from. Reported on the gateway's /healthz
// and as every process's build_info gauge, so a rolling update shows which processes run what.

/** The version and commit a process was built from; "unknown" for what cannot be known. */
export interface BuildInfo {
  version: string;
  commit: string;
}

// Set by scripts/build.ts (esbuild `define`) in compiled processes; undeclared under tsx.
declare const __PLATFORM_BUILD__: BuildInfo | undefined;

const UNKNOWN = "unknown";
const compiled = typeof __PLATFORM_BUILD__ === "undefined" ? undefined : __PLATFORM_BUILD__;
/** The repository root, from libs/kit/src (source runs only: a bundle is elsewhere). */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

function sourceVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version?: string };
    return pkg.version ?? UNKNOWN;
  } catch {
    return UNKNOWN;
  }
}

function sourceCommit(): string {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return UNKNOWN;
  }
}

let checkoutVersion: string | undefined;
let checkoutCommit: string | undefined;

/**
 * This process's build. The version: what scripts/build.ts compiled in, else the root
 * package.json's. The commit: what scripts/build.ts compiled in (`git rev-parse HEAD` at build
 * time, or the BUILD_COMMIT it was given), else BUILD_COMMIT from the environment (the images
 * and the stack may pass it), else for a run from source the checkout's HEAD, else "unknown".
 */
export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  checkoutVersion ??= compiled?.version ?? sourceVersion();
  const version = checkoutVersion;
  if (compiled && compiled.commit !== UNKNOWN) return { version, commit: compiled.commit };
  const fromEnv = env.BUILD_COMMIT?.trim();
  if (fromEnv) return { version, commit: fromEnv };
  if (compiled) return { version, commit: UNKNOWN };
  checkoutCommit ??= sourceCommit();
  return { version, commit: checkoutCommit };
}

/**
 * The `build_info{version,commit,service}` gauge, always 1: the Prometheus convention for
 * labelling a process with its build (joins on it pick the version of any other series).
 */
export function registerBuildInfoMetric(service: string, meter: Meter = metrics.getMeter("platform")): void {
  const { version, commit } = buildInfo();
  meter
    .createObservableGauge("build_info", { description: "The build this process runs: version and commit; always 1" })
    .addCallback((result) => result.observe(1, { version, commit, service }));
}
