// Every deployable process (each folder of services/, the gateway and the webhook delivery worker) has
// its Kubernetes manifests, its compose entry and its Dockerfile target, and they agree with the code:
// probe ports are the ports the process listens on, images carry the sources a process imports, the
// pods are hardened, the network policies allow only the documented paths. Reads the files only;
// scripts/validate-deploy.sh renders the kustomizations and checks them against the schemas.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const K8S = join(ROOT, "deploy/k8s");
const ENVS = ["dev", "production"];

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is walked freely in assertions
type Any = any;
const read = (rel: string) => readFileSync(join(ROOT, rel), "utf8");
const yamlDocs = (abs: string): Any[] =>
  parseAllDocuments(readFileSync(abs, "utf8"))
    .map((d) => d.toJS())
    .filter(Boolean);

/** The port a process listens on, as its config.ts declares it (`NAME: { ..., default: 7101 }`). */
function configPort(service: string, variable: string): number {
  const source = read(`services/${service}/src/config.ts`);
  const m = source.match(new RegExp(`\\b${variable}:\\s*\\{[^}]*?default:\\s*(\\d+)`, "s"));
  if (!m) throw new Error(`services/${service}/src/config.ts declares no ${variable} default`);
  return Number(m[1]);
}

interface Proc {
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

const serviceFolders = readdirSync(join(ROOT, "services"), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(ROOT, "services", d.name, "package.json")))
  .map((d) => d.name)
  .sort();

const processes: Proc[] = [
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
function baseObjects(dir: string): Map<string, Any[]> {
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

const one = (objs: Map<string, Any[]>, kind: string): Any => {
  const list = objs.get(kind) ?? [];
  expect(list, `exactly one ${kind}`).toHaveLength(1);
  return list[0];
};

function expectHardened(podSpec: Any, where: string) {
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

// ------------------------------------------------------------------------ Dockerfile
interface Stage {
  from: string;
  copies: string[];
  cmd?: string[];
  user?: string;
  runs: string[];
  /** `COPY --from=<stage> <src>… <dest>`: [stage, src] pairs. */
  fromCopies: [string, string][];
}
function dockerStages(): Map<string, Stage> {
  const stages = new Map<string, Stage>();
  let current: Stage | undefined;
  const lines = read("Dockerfile")
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((l) => !l.trim().startsWith("#"));
  for (const line of lines) {
    const from = line.match(/^FROM\s+(\S+)\s+AS\s+(\S+)/i);
    if (from) {
      current = { from: from[1] as string, copies: [], runs: [], fromCopies: [] };
      stages.set(from[2] as string, current);
      continue;
    }
    if (!current) continue;
    const copy = line.match(/^COPY\s+(.*)$/i);
    if (copy && !/--from=/.test(copy[1] as string)) {
      const args = (copy[1] as string).split(/\s+/).filter((a) => a && !a.startsWith("--"));
      current.copies.push(...args.slice(0, -1));
    }
    const copyFrom = copy && (copy[1] as string).match(/--from=(\S+)\s+(.*)$/);
    if (copyFrom) {
      const args = (copyFrom[2] as string).split(/\s+/).filter((a) => a && !a.startsWith("--"));
      const stage = current;
      for (const src of args.slice(0, -1)) stage.fromCopies.push([copyFrom[1] as string, src]);
    }
    const cmd = line.match(/^CMD\s+(\[.*\])/i);
    if (cmd) current.cmd = JSON.parse(cmd[1] as string);
    const user = line.match(/^USER\s+(\S+)/i);
    if (user) current.user = user[1];
    const run = line.match(/^RUN\s+(.*)$/i);
    if (run) current.runs.push(run[1] as string);
  }
  return stages;
}
const stages = dockerStages();
/** What a stage and the stages it is built FROM copy, and its user and command. */
function resolved(target: string): {
  copies: string[];
  fromCopies: [string, string][];
  runs: string[];
  user?: string;
  cmd?: string[];
} {
  const s = stages.get(target);
  if (!s) return { copies: [], fromCopies: [], runs: [] };
  const parent = stages.has(s.from) ? resolved(s.from) : { copies: [], fromCopies: [], runs: [] };
  return {
    copies: [...parent.copies, ...s.copies],
    fromCopies: [...parent.fromCopies, ...s.fromCopies],
    runs: [...parent.runs, ...s.runs],
    user: s.user ?? parent.user,
    cmd: s.cmd ?? parent.cmd,
  };
}

// ------------------------------------------------------------------------ compose
const compose = parse(read("docker-compose.yml"), { merge: true, maxAliasCount: 1000 });

describe("the deployables", () => {
  it("are the gateway, every folder of services/ and the webhook delivery worker", () => {
    expect(serviceFolders.length).toBeGreaterThan(0);
    const names = processes.map((p) => p.name);
    expect(names).toContain("gateway");
    for (const s of serviceFolders) expect(names).toContain(s);
  });
});

describe.each(processes)("$name", (proc) => {
  const dir = join(K8S, "base", proc.name);
  const objs = existsSync(join(dir, "kustomization.yaml")) ? baseObjects(dir) : new Map<string, Any[]>();

  it("has its base manifests: Deployment, Service, ServiceAccount, ConfigMap, HPA, PDB, NetworkPolicy", () => {
    expect(existsSync(join(dir, "kustomization.yaml")), `deploy/k8s/base/${proc.name}/kustomization.yaml`).toBe(true);
    const deployment = one(objs, "Deployment");
    const selector = deployment.spec.selector.matchLabels;
    expect(deployment.metadata.name).toBe(proc.name);
    expect(deployment.spec.template.metadata.labels).toMatchObject(selector);
    expect(deployment.spec.replicas, "the HPA owns the replica count").toBeUndefined();

    const service = one(objs, "Service");
    expect(service.spec.selector).toEqual(selector);

    const sa = one(objs, "ServiceAccount");
    expect(sa.automountServiceAccountToken).toBe(false);
    expect(deployment.spec.template.spec.serviceAccountName).toBe(sa.metadata.name);

    const config = one(objs, "ConfigMap");
    const container = deployment.spec.template.spec.containers[0];
    expect(container.envFrom).toContainEqual({ configMapRef: { name: config.metadata.name } });

    const hpa = one(objs, "HorizontalPodAutoscaler");
    expect(hpa.apiVersion).toBe("autoscaling/v2");
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: proc.name });

    const pdb = one(objs, "PodDisruptionBudget");
    expect(pdb.spec.selector.matchLabels).toEqual(selector);

    const np = one(objs, "NetworkPolicy");
    expect(np.spec.podSelector.matchLabels).toEqual(selector);
    expect(np.spec.policyTypes).toEqual(["Ingress", "Egress"]);
  });

  it("is given every secret and database URL, which production refuses to default", async () => {
    // The spec the process loads: gateway/src/config.ts or its service's config.ts (`*ConfigSpec`).
    const module = await import(join(ROOT, proc.folder, "src/config.ts"));
    const specName =
      proc.name === "gateway"
        ? "gatewayConfigSpec"
        : Object.keys(module).find((k) => /^(?!delivery)\w+ConfigSpec$/.test(k));
    const spec = module[specName as string] as Record<string, { sensitive?: boolean; default?: unknown }>;
    const required = Object.entries(spec)
      .filter(([, v]) => v.sensitive && v.default !== undefined)
      .map(([name]) => name);
    expect(required.length).toBeGreaterThan(0);
    const container = one(objs, "Deployment").spec.template.spec.containers[0];
    const fromSecrets = (container.env ?? []).filter((e: Any) => e.valueFrom?.secretKeyRef).map((e: Any) => e.name);
    expect(fromSecrets.sort()).toEqual(expect.arrayContaining(required.sort()));
  });

  it("probes the port it listens on", () => {
    const deployment = one(objs, "Deployment");
    const c = deployment.spec.template.spec.containers[0];
    const port = proc.healthPort;
    expect(c.ports.map((p: Any) => p.containerPort)).toContain(port);
    expect(c.ports).toContainEqual(expect.objectContaining({ name: "metrics", containerPort: 9464 }));
    if (proc.kind === "gateway") {
      expect(c.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "http" });
      expect(c.startupProbe.httpGet).toEqual({ path: "/readyz", port: "http" });
      expect(c.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
      expect(c.ports).toContainEqual(expect.objectContaining({ name: "http", containerPort: port }));
    } else {
      // The standard gRPC health protocol on the RPC (or health) port, natively probed by the kubelet.
      expect(c.readinessProbe.grpc).toEqual({ port });
      expect(c.startupProbe.grpc).toEqual({ port });
      expect(c.livenessProbe.tcpSocket ?? c.livenessProbe.grpc).toEqual({ port });
    }
    const service = one(objs, "Service");
    expect(service.spec.ports.map((p: Any) => p.port)).toContain(port);
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
    expect(c.lifecycle?.preStop, "a preStop pause for endpoint removal").toBeDefined();
  });

  it("runs hardened", () => {
    expectHardened(one(objs, "Deployment").spec.template.spec, `${proc.name} Deployment`);
  });

  it("has a migration Job when it has a database", () => {
    if (!proc.migratedBy) return;
    const migrate = join(K8S, "base", proc.migratedBy, "migrate");
    expect(existsSync(join(migrate, "kustomization.yaml")), `deploy/k8s/base/${proc.migratedBy}/migrate`).toBe(true);
    const job = one(baseObjects(migrate), "Job");
    const c = job.spec.template.spec.containers[0];
    expect(c.env).toContainEqual({ name: "MIGRATE_ONLY", value: "true" });
    expect(c.image).toBe(`platform/${proc.migratedBy}`);
    expect(job.spec.template.spec.restartPolicy).toBe("Never");
    expectHardened(job.spec.template.spec, `${proc.migratedBy} migration Job`);
    // The Job and the process read the database URL from the same Secret key.
    const dbRef = (cont: Any) => cont.env.find((e: Any) => e.name === "DATABASE_URL")?.valueFrom?.secretKeyRef;
    expect(dbRef(one(objs, "Deployment").spec.template.spec.containers[0])).toEqual(dbRef(c));
  });

  it.each(ENVS)("deploys on its own in %s, and with the whole overlay", (env) => {
    const own = join(K8S, "overlays", env, "services", proc.name, "kustomization.yaml");
    expect(existsSync(own), `overlays/${env}/services/${proc.name}`).toBe(true);
    const k = parse(readFileSync(own, "utf8"));
    expect(k.namespace).toBeTruthy();
    expect(k.resources).toEqual([`../../../../base/${proc.name}`]);
    expect(k.components).toEqual([`../../../../components/${env}`]);
    const whole = parse(readFileSync(join(K8S, "overlays", env, "kustomization.yaml"), "utf8"));
    expect(whole.resources).toContain(`services/${proc.name}`);
    if (proc.migratedBy) {
      const migrations = parse(readFileSync(join(K8S, "overlays", env, "migrations", "kustomization.yaml"), "utf8"));
      expect(migrations.resources).toContain(proc.migratedBy);
    }
    const component = parse(readFileSync(join(K8S, "components", env, "kustomization.yaml"), "utf8"));
    const image = component.images.find((i: Any) => i.name === `platform/${proc.name}`);
    expect(image?.newTag, `${env} pins the image tag of ${proc.name}`).toMatch(/^[\w.-]+$/);
  });

  it("has a compose entry built from its Dockerfile target, with a healthcheck", () => {
    const svc = compose.services[proc.name];
    expect(svc, `docker-compose.yml services.${proc.name}`).toBeDefined();
    expect(svc.build.target).toBe(proc.name);
    expect(svc.healthcheck?.test).toBeDefined();
    if (proc.kind !== "gateway") expect(String(svc.environment.HEALTH_PORT)).toBe(String(proc.healthPort));
    for (const [dep, cond] of Object.entries(svc.depends_on as Record<string, Any>)) {
      expect(compose.services[dep], `${proc.name} depends on ${dep}`).toBeDefined();
      expect(["service_healthy", "service_completed_successfully", "service_started"]).toContain(cond.condition);
    }
    if (proc.migratedBy) {
      const migrate = compose.services[`${proc.migratedBy}-migrate`];
      expect(migrate, `${proc.migratedBy}-migrate one-shot`).toBeDefined();
      expect(migrate.environment.MIGRATE_ONLY).toBe("true");
      expect(migrate.restart).toBe("no");
      expect(migrate.environment.DATABASE_URL).toBe(svc.environment.DATABASE_URL);
      expect(svc.depends_on[`${proc.migratedBy}-migrate`]).toEqual({ condition: "service_completed_successfully" });
    }
  });

  it("has a Dockerfile target that runs its compiled entry point as non-root, with only its own workspace", () => {
    expect(stages.has(proc.name), `Dockerfile stage ${proc.name}`).toBe(true);
    const stage = resolved(proc.name);
    // Compiled JavaScript (scripts/build.ts bundles proc.entry into dist/<name>/), no tsx.
    expect(stage.cmd).toEqual(["node", `dist/${proc.name}/main.js`]);
    expect(existsSync(join(ROOT, proc.entry))).toBe(true);
    expect(read("scripts/build.ts")).toContain(`"${proc.entry}"`);
    expect(stage.user, "a non-root user").toMatch(/^(node|[1-9]\d*(:[1-9]\d*)?)$/);
    // Nothing from the build context: no sources at all, of any package.
    expect(stage.copies, `${proc.name} copies no sources`).toEqual([]);
    const deps = `deps-${proc.folder.split("/").at(-1)}`;
    expect(stage.fromCopies.sort()).toEqual(
      [
        ["build", `/app/dist/${proc.name}`],
        [deps, "/app/node_modules"],
      ].sort(),
    );
    // Its dependencies are its own workspace's production dependencies, without the workspace links.
    const install = stages.get(deps)?.runs.join(" ") ?? "";
    expect(install).toMatch(new RegExp(`npm ci --omit=dev .*-w ${proc.folder} --include-workspace-root=false`));
    expect(install).toContain("rm -rf node_modules/@platform");
    expect(resolved(proc.name).runs.join(" ")).not.toMatch(/tsx/);
  });
});

describe("the Dockerfile", () => {
  it("copies only sources that exist, every workspace package manifest before npm ci, and builds with scripts/build.ts", () => {
    for (const [name, stage] of stages) {
      for (const src of stage.copies) expect(existsSync(join(ROOT, src)), `${name}: COPY ${src}`).toBe(true);
    }
    const deps = stages.get("manifests");
    const workspaces = [
      "libs/contracts",
      "libs/kit",
      "libs/sandbox",
      "gateway",
      ...serviceFolders.map((s) => `services/${s}`),
      "cli",
      "runtime",
    ];
    for (const w of workspaces)
      expect(deps?.copies, `manifests stage copies ${w}/package.json`).toContain(`${w}/package.json`);
    expect(stages.get("build")?.runs.join(" ")).toContain("npm ci");
    expect(stages.get("build")?.runs.join(" ")).toContain("scripts/build.ts");
  });

  it("leaves dev-only files out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["**/node_modules", "**/test", ".git", ".env"]) expect(ignored).toContain(entry);
    // Only the build script of scripts/ reaches it.
    expect(ignored).toContain("scripts");
    expect(ignored).toContain("!scripts/build.ts");
  });
});

describe("the Kubernetes tree", () => {
  const deployments = processes.map((p) => one(baseObjects(join(K8S, "base", p.name)), "Deployment"));
  const policies = processes.map((p) => one(baseObjects(join(K8S, "base", p.name)), "NetworkPolicy"));

  it("denies all traffic in the namespace by default", () => {
    const platform = yamlDocs(join(K8S, "base/platform/networkpolicies.yaml"));
    const deny = platform.find((o) => o.metadata.name === "default-deny");
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
  });

  it("lets only the gateway (and the documented callers) reach a service's RPC port", () => {
    const allowedCallers: Record<string, string[]> = {
      "crm-data": ["gateway", "revenue", "analytics"],
      identity: ["gateway", "revenue"],
    };
    for (const proc of processes.filter((p) => p.kind === "api")) {
      const np = policies[processes.indexOf(proc)];
      const rpcRules = np.spec.ingress.filter((r: Any) => r.ports?.some((p: Any) => p.port === proc.healthPort));
      expect(rpcRules, `${proc.name}: one ingress rule for the RPC port`).toHaveLength(1);
      const from = rpcRules[0].from.map((f: Any) => {
        expect(f.namespaceSelector ?? f.ipBlock, `${proc.name}: callers from this namespace only`).toBeUndefined();
        return f.podSelector.matchLabels["app.kubernetes.io/name"];
      });
      expect(from.sort()).toEqual((allowedCallers[proc.name] ?? ["gateway"]).sort());
    }
    // The worker receives nothing but the kubelet's probes.
    const worker = processes.findIndex((p) => p.kind === "worker");
    if (worker >= 0) expect(policies[worker].spec.ingress).toEqual([]);
  });

  it("lets only each service reach its own database", () => {
    for (const [i, proc] of processes.entries()) {
      const dbs = policies[i].spec.egress
        .flatMap((r: Any) => r.to ?? [])
        .map((t: Any) => t.podSelector?.matchLabels?.["platform.example/database"])
        .filter(Boolean);
      const expected = proc.kind === "gateway" ? [] : proc.migratedBy ? [proc.migratedBy] : [];
      expect(dbs, `${proc.name}'s database egress`).toEqual(expected);
    }
  });

  it("lets the delivery worker out to HTTPS on the internet, not to private ranges", () => {
    const worker = processes.findIndex((p) => p.kind === "worker");
    if (worker < 0) return;
    const https = policies[worker].spec.egress.find((r: Any) => r.ports?.some((p: Any) => p.port === 443));
    const v4 = https.to.find((t: Any) => t.ipBlock?.cidr === "0.0.0.0/0");
    expect(v4.ipBlock.except).toEqual(expect.arrayContaining(["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]));
  });

  it("references only Secrets the dev example provides (so the names and keys agree)", () => {
    const provided = new Set(
      yamlDocs(join(K8S, "overlays/dev/secrets/secrets.example.yaml")).flatMap((s) =>
        Object.keys(s.stringData).map((k) => `${s.metadata.name}/${k}`),
      ),
    );
    const jobs = processes
      .filter((p) => p.migratedBy === p.name)
      .map((p) => one(baseObjects(join(K8S, "base", p.name, "migrate")), "Job"));
    for (const obj of [...deployments, ...jobs]) {
      for (const e of obj.spec.template.spec.containers[0].env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (ref) expect(provided, `${obj.metadata.name}: ${ref.name}/${ref.key}`).toContain(`${ref.name}/${ref.key}`);
      }
    }
  });

  it("sets the sandbox off in production and pins registry images", () => {
    const prod = parse(readFileSync(join(K8S, "components/production/kustomization.yaml"), "utf8"));
    expect(JSON.stringify(prod.patches)).toMatch(/SANDBOX_ENABLED[\s\S]*"false"|SANDBOX_ENABLED[\s\S]*false/);
    expect(JSON.stringify(prod.patches)).toMatch(/PLATFORM_ENV[\s\S]*production/);
    for (const image of prod.images) expect(image.newTag).not.toBe("latest");
  });
});
