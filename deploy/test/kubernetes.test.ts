import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Any, baseObjects, K8S, one, processes, yamlDocs } from "./deployables.js";

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
