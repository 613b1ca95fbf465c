// Writes deploy/k8s/components/monitoring/prometheusrule.yaml from deploy/prometheus/rules/*.yml:
// the rules live in one place (tested with promtool), the PrometheusRule is their copy for the
// Prometheus Operator. `--check` exits 1 when the committed file differs (deploy/test/monitoring.test.ts
// and scripts/validate-deploy.sh run it).
//   node --import tsx deploy/tools/prometheus-rule.ts [--check]
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const RULES = join(ROOT, "deploy/prometheus/rules");
export const PROMETHEUS_RULE = join(ROOT, "deploy/k8s/components/monitoring/prometheusrule.yaml");

/** The PrometheusRule's text for the rules files as they are now. */
export function prometheusRule(): string {
  const groups = readdirSync(RULES)
    .filter((f) => f.endsWith(".yml"))
    .sort()
    .flatMap((f) => (parse(readFileSync(join(RULES, f), "utf8")) as { groups: unknown[] }).groups);
  const rule = {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: {
      name: "platform",
      labels: { "app.kubernetes.io/part-of": "platform", "app.kubernetes.io/component": "monitoring" },
    },
    spec: { groups },
  };
  return `# Generated from deploy/prometheus/rules by deploy/tools/prometheus-rule.ts: edit the rules there.\n${stringify(rule, { lineWidth: 0 })}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = prometheusRule();
  if (process.argv.includes("--check")) {
    if (readFileSync(PROMETHEUS_RULE, "utf8") !== text) {
      console.error(`${PROMETHEUS_RULE} is stale: run node --import tsx deploy/tools/prometheus-rule.ts`);
      process.exit(1);
    }
  } else writeFileSync(PROMETHEUS_RULE, text);
}
