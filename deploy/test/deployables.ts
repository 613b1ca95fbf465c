// The deployable processes (each folder of services/, the gateway and the webhook delivery worker) and
// readers of the files that deploy them, shared by the deploy tests.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { parse, parseAllDocuments } from "yaml";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const K8S = join(ROOT, "deploy/k8s");
export const ENVS = ["dev", "production"];

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is walked freely in assertions
export type Any = any;
export const read = (rel: string) => readFileSync(join(ROOT, rel), "utf8");
export const yamlDocs = (abs: string): Any[] =>
  parseAllDocuments(readFileSync(abs, "utf8"))
    .map((d) => d.toJS())
    .filter(Boolean);

/** The port a process listens on, as its config.ts declares it (`NAME: { ..., default: 7101 }`). */
export function configPort(service: string, variable: string): number {
  const source = read(`services/${service}/src/config.ts`);
  const m = source.match(new RegExp(`\\b${variable}:\\s*\\{[^}]*?default:\\s*(\\d+)`, "s"));
  if (!m) throw new Error(`services/${service}/src/config.ts declares no ${variable} default`);
  return Number(m[1]);
}

export interface Proc {
  name: string;
  kind: "gateway" | "api" | "worker";
  entry: string;
  /** The workspace folder whose sources it runs. */
  folder: string;
  /** The port its health answers on. */
  healthPort: number;
  /** The service whose migration Job migrates its database, if it has one. */
  migratedBy?: string;
}

export const serviceFolders = readdirSync(join(ROOT, "services"), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(ROOT, "services", d.name, "package.json")))
  .map((d) => d.name)
  .sort();

export const processes: Proc[] = [
  { name: "gateway", kind: "gateway", entry: "gateway/src/main.ts", folder: "gateway", healthPort: 8080 },
  ...serviceFolders.map(
    (s): Proc => ({
      name: s,
      kind: "api",
      entry: `services/${s}/src/main.ts`,
      folder: `services/${s}`,
      healthPort: configPort(s, "PORT"),
      ...(existsSync(join(ROOT, "services", s, "migrations")) ? { migratedBy: s } : {}),
    }),
  ),
  ...(existsSync(join(ROOT, "services/webhooks/src/delivery-main.ts"))
    ? [
        {
          name: "webhooks-delivery",
          kind: "worker",
          entry: "services/webhooks/src/delivery-main.ts",
          folder: "services/webhooks",
          healthPort: configPort("webhooks", "DELIVERY_PORT"),
          migratedBy: "webhooks",
        } satisfies Proc,
      ]
    : []),
];

/** Every object of a base folder (not its sub-folders), by kind. */
export function baseObjects(dir: string): Map<string, Any[]> {
  const byKind = new Map<string, Any[]>();
  const k = parse(readFileSync(join(dir, "kustomization.yaml"), "utf8"));
  for (const file of k.resources ?? []) {
    for (const obj of yamlDocs(join(dir, file))) byKind.set(obj.kind, [...(byKind.get(obj.kind) ?? []), obj]);
  }
  for (const gen of k.configMapGenerator ?? [])
    byKind.set("ConfigMap", [
      ...(byKind.get("ConfigMap") ?? []),
      { kind: "ConfigMap", metadata: { name: gen.name }, gen },
    ]);
  return byKind;
}

export const one = (objs: Map<string, Any[]>, kind: string): Any => {
  const list = objs.get(kind) ?? [];
  expect(list, `exactly one ${kind}`).toHaveLength(1);
  return list[0];
};

export function expectHardened(podSpec: Any, where: string) {
  expect(podSpec.automountServiceAccountToken, `${where}: no service account token`).toBe(false);
  expect(podSpec.securityContext?.runAsNonRoot, `${where}: runAsNonRoot`).toBe(true);
  expect(podSpec.securityContext?.runAsUser, `${where}: a non-root uid`).toBeGreaterThan(0);
  expect(podSpec.securityContext?.seccompProfile?.type, `${where}: seccomp`).toBe("RuntimeDefault");
  const tmp = (podSpec.volumes ?? []).find((v: Any) => v.name === "tmp");
  expect(tmp?.emptyDir, `${where}: an emptyDir for /tmp`).toBeDefined();
  for (const c of podSpec.containers) {
    const sc = c.securityContext ?? {};
    expect(sc.allowPrivilegeEscalation, `${where}/${c.name}: allowPrivilegeEscalation`).toBe(false);
    expect(sc.readOnlyRootFilesystem, `${where}/${c.name}: readOnlyRootFilesystem`).toBe(true);
    expect(sc.privileged ?? false, `${where}/${c.name}: not privileged`).toBe(false);
    expect(sc.capabilities?.drop, `${where}/${c.name}: drops all capabilities`).toEqual(["ALL"]);
    expect(c.volumeMounts, `${where}/${c.name}: /tmp mounted`).toContainEqual({ name: "tmp", mountPath: "/tmp" });
    expect(c.resources?.requests?.cpu && c.resources?.requests?.memory, `${where}/${c.name}: requests`).toBeTruthy();
    expect(c.resources?.limits?.memory, `${where}/${c.name}: a memory limit`).toBeTruthy();
  }
}

// ------------------------------------------------------------------------ compose
export const compose = parse(read("docker-compose.yml"), { merge: true, maxAliasCount: 1000 });
