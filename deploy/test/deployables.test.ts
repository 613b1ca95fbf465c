// Every deployable process (each folder of services/, the gateway and the webhook delivery worker) has
// its Kubernetes manifests, its compose entry and its Dockerfile target, and they agree with the code:
// probe ports are the ports the process listens on, images carry the sources a process imports, the
// pods are hardened, the network policies allow only the documented paths. Reads the files only;
// scripts/validate-deploy.sh renders the kustomizations and checks them against the schemas.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  type Any,
  baseObjects,
  compose,
  ENVS,
  expectHardened,
  K8S,
  one,
  processes,
  ROOT,
  read,
  serviceFolders,
} from "./deployables.js";
import { resolved, stages } from "./dockerfile.js";

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

  it("samples traces parent-based at one in ten (docs/observability.md: what tracing costs)", () => {
    const literals: string[] = one(objs, "ConfigMap").gen.literals ?? [];
    expect(literals).toContain("OTEL_TRACES_SAMPLER=parentbased_traceidratio");
    expect(literals).toContain("OTEL_TRACES_SAMPLER_ARG=0.1");
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
        // The gateway serves the developer console's build at /console (gateway/src/console.ts).
        ...(proc.name === "gateway" ? [["build", "/app/dist/console"]] : []),
      ].sort(),
    );
    // Its dependencies are its own workspace's production dependencies, without the workspace links.
    const install = stages.get(deps)?.runs.join(" ") ?? "";
    expect(install).toMatch(new RegExp(`npm ci --omit=dev .*-w ${proc.folder} --include-workspace-root=false`));
    expect(install).toContain("rm -rf node_modules/@platform");
    expect(resolved(proc.name).runs.join(" ")).not.toMatch(/tsx/);
  });
});
