import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { PROCESSES } from "./build.js";

// Fails (exit 1) on any import that couples deployable units (issue #16; docs/architecture.md):
//  - a service (services/<A>, sources and tests) importing another service, the gateway,
//    the runtime or the CLI, by package name or by a relative path;
//  - a library (libs/*) or the gateway importing a service, the runtime or the CLI;
//  - the CLI's sources importing a service (the CLI reaches the admin planes through
//    @platform/contracts only);
//  - anything outside a service importing it other than through its public entry points
//    (the `exports` of its package.json: what its process and the composing code need);
//    only the runtime, the CLI's tests, the root tests and scripts may do that;
//  - production code (any src/ folder) importing @platform/kit/testing, the test helpers;
//  - a process of the distributed runtime whose main module does not import
//    @platform/kit/v8-flags first (libs/kit/src/v8-flags.ts says why).
// Usage: node --import tsx scripts/check-imports.ts   (run by `npm run lint`)

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..");
const SERVICES = readdirSync(join(ROOT, "services")).filter((d) => statSync(join(ROOT, "services", d)).isDirectory());
const LIBS = readdirSync(join(ROOT, "libs")).filter((d) => statSync(join(ROOT, "libs", d)).isDirectory());

/** The unit a file belongs to: "service:<name>", "lib:<name>", "gateway", "runtime", "cli", "root". */
function unitOf(file: string): string {
  const [top, name] = relative(ROOT, file).split(sep);
  if (top === "services" && name) return `service:${name}`;
  if (top === "libs" && name) return `lib:${name}`;
  if (top === "gateway" || top === "runtime" || top === "cli") return top;
  return "root";
}

/** The unit a package name (@platform/<x>) stands for, if it is one of ours. */
function unitOfPackage(name: string): string | undefined {
  if (SERVICES.includes(name)) return `service:${name}`;
  if (LIBS.includes(name)) return `lib:${name}`;
  if (name === "gateway" || name === "runtime" || name === "cli") return name;
  return undefined;
}

function publicEntries(service: string): Set<string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "services", service, "package.json"), "utf8"));
  return new Set(Object.keys(pkg.exports ?? {}).map((k) => (k === "." ? "" : k.slice(1))));
}

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) yield path;
  }
}

/** Why `file` may not import `target` (a unit), or undefined when it may. */
function violation(file: string, from: string, target: string, subpath: string | undefined): string | undefined {
  if (from === target) return undefined;
  const inCliTests = from === "cli" && relative(join(ROOT, "cli"), file).startsWith(`test${sep}`);
  if (target.startsWith("service:")) {
    const service = target.slice("service:".length);
    if (from.startsWith("service:")) return `a service may not import another service (${service})`;
    if (from.startsWith("lib:") || from === "gateway") return `${from} may not import a service (${service})`;
    if (from === "cli" && !inCliTests) return "the CLI reaches the services through @platform/contracts only";
    if (subpath === undefined) return `import ${service} through its package name, not a path into it`;
    if (!publicEntries(service).has(subpath)) {
      return `@platform/${service}${subpath} is not a public entry point of ${service} (its package.json exports)`;
    }
    return undefined;
  }
  if (target === "runtime" || target === "cli") {
    if (from !== "root") return `${from} may not import the ${target}`;
    return undefined;
  }
  if (target === "gateway" && (from.startsWith("service:") || from.startsWith("lib:"))) {
    return `${from} may not import the gateway`;
  }
  if (subpath === undefined && target !== "root" && from !== "root") {
    return `import ${target} through its package name, not a relative path into it`;
  }
  return undefined;
}

const problems: string[] = [];
let checked = 0;
for (const top of ["services", "libs", "gateway", "runtime", "cli", "test", "scripts", "deploy"]) {
  for (const file of sources(join(ROOT, top))) {
    checked++;
    const from = unitOf(file);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    for (const { fileName: spec } of importedFiles) {
      if (spec === "@platform/kit/testing" && relative(ROOT, file).split(sep).includes("src")) {
        problems.push(`${relative(ROOT, file)}: "${spec}": production code may not import the test helpers`);
        continue;
      }
      let target: string | undefined;
      let subpath: string | undefined;
      const pkg = /^@platform\/([^/]+)(\/.*)?$/.exec(spec);
      if (pkg) {
        target = unitOfPackage(pkg[1] ?? "");
        subpath = pkg[2] ?? "";
      } else if (spec.startsWith(".")) {
        target = unitOf(resolve(dirname(file), spec));
      }
      if (!target) continue;
      const why = violation(file, from, target, subpath);
      if (why) problems.push(`${relative(ROOT, file)}: "${spec}": ${why}`);
    }
  }
}

// The embedded runtime is one process for development, left with V8's defaults.
for (const [name, entry] of Object.entries(PROCESSES)) {
  if (name === "embedded") continue;
  const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, entry), "utf8"), true, true);
  if (importedFiles[0]?.fileName !== "@platform/kit/v8-flags") {
    problems.push(`${entry}: the main module of the ${name} process must import "@platform/kit/v8-flags" first`);
  }
}

if (problems.length > 0) {
  console.error(`check-imports: ${problems.length} forbidden import(s):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`check-imports: ${checked} files, no import between services`);
