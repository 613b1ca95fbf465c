import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PROMETHEUS_RULE, prometheusRule } from "../tools/prometheus-rule.js";
import { type Any, baseObjects, K8S, one, processes, ROOT, yamlDocs } from "./deployables.js";

describe("monitoring in Kubernetes (deploy/k8s/components/monitoring)", () => {
  const monitor = yamlDocs(join(K8S, "components/monitoring/podmonitor.yaml"))[0];

  it("scrapes every process's metrics port, with the process's name as job", () => {
    expect(monitor.spec.jobLabel).toBe("app.kubernetes.io/name");
    const endpoint = monitor.spec.podMetricsEndpoints[0];
    for (const p of processes) {
      const deployment = one(baseObjects(join(K8S, "base", p.name)), "Deployment");
      const labels = deployment.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) expect(labels[k], p.name).toBe(v);
      expect(labels["app.kubernetes.io/name"]).toBe(p.name);
      const ports = deployment.spec.template.spec.containers[0].ports.map((x: Any) => x.name);
      expect(ports, p.name).toContain(endpoint.port);
    }
  });

  it("lets Prometheus through the namespace's network policy to that port", () => {
    const policy = yamlDocs(join(K8S, "base/platform/networkpolicies.yaml")).find(
      (o) => o.metadata.name === "allow-telemetry",
    );
    const container = one(baseObjects(join(K8S, "base/gateway")), "Deployment").spec.template.spec.containers[0];
    const metricsPort = container.ports.find((x: Any) => x.name === "metrics").containerPort;
    expect(policy.spec.ingress[0].ports[0].port).toBe(metricsPort);
  });

  it("carries the current rules of deploy/prometheus as its PrometheusRule", () => {
    expect(readFileSync(PROMETHEUS_RULE, "utf8")).toBe(prometheusRule());
    const rule = parse(readFileSync(PROMETHEUS_RULE, "utf8"));
    const alerts = rule.spec.groups.flatMap((g: Any) => g.rules.filter((r: Any) => r.alert));
    expect(alerts.length).toBeGreaterThan(0);
    for (const a of alerts) {
      expect(a.annotations.runbook_url, a.alert).toBe(`docs/runbooks/${a.alert}.md`);
      expect(() => readFileSync(join(ROOT, a.annotations.runbook_url))).not.toThrow();
    }
  });
});
