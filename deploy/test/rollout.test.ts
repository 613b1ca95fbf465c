// The Kubernetes settings of a rolling update without errors (deploy/tools/rollout-rules.ts, which
// scripts/validate-deploy.sh runs on every rendered kustomization): the manifests have them, and
// each rule refuses a manifest that lacks what it checks.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_DRAIN_MS, drainMs, preStopSeconds, rolloutProblems } from "../tools/rollout-rules.js";
import { type Any, baseObjects, K8S, processes } from "./deployables.js";

const objectsOf = (name: string): Any[] => [...baseObjects(join(K8S, "base", name)).values()].flat();
/** A process's objects, with `change` applied to a deep copy of its Deployment or its PDB. */
function changed(name: string, kind: "Deployment" | "PodDisruptionBudget", change: (o: Any) => void): Any[] {
  return objectsOf(name).map((o) => {
    if (o.kind !== kind) return o;
    const copy = structuredClone(o);
    change(copy);
    return copy;
  });
}
const container = (d: Any): Any => d.spec.template.spec.containers[0];

describe("rolling updates in the Kubernetes manifests", () => {
  it.each(processes.map((p) => p.name))("%s: maxUnavailable 0, readiness, preStop, grace > drain, a PDB", (name) => {
    expect(rolloutProblems(objectsOf(name))).toEqual([]);
    const deployment = objectsOf(name).find((o) => o.kind === "Deployment");
    const pause = preStopSeconds(container(deployment)) ?? 0;
    expect(pause).toBeGreaterThan(0);
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
      pause + DEFAULT_DRAIN_MS / 1000,
    );
  });

  const name = processes[0]?.name ?? "identity";
  it.each([
    [
      "a rolling update that may take a pod away first",
      (d: Any): void => {
        d.spec.strategy.rollingUpdate.maxUnavailable = 1;
      },
      /maxUnavailable must be 0/,
    ],
    [
      "a rolling update that may neither add nor remove",
      (d: Any): void => {
        d.spec.strategy.rollingUpdate.maxSurge = 0;
      },
      /maxSurge 0/,
    ],
    [
      "a recreate strategy",
      (d: Any): void => {
        d.spec.strategy = { type: "Recreate" };
      },
      /not RollingUpdate/,
    ],
    [
      "no readiness probe",
      (d: Any): void => {
        delete container(d).readinessProbe;
      },
      /no readinessProbe/,
    ],
    [
      "no preStop pause",
      (d: Any): void => {
        delete container(d).lifecycle;
      },
      /no preStop pause/,
    ],
    [
      "a grace period shorter than pause + drain",
      (d: Any): void => {
        d.spec.template.spec.terminationGracePeriodSeconds = 20;
      },
      /terminationGracePeriodSeconds 20/,
    ],
    [
      "a drain (SHUTDOWN_TIMEOUT_MS in the env) the grace period does not cover",
      (d: Any): void => {
        container(d).env.push({ name: "SHUTDOWN_TIMEOUT_MS", value: "28000" });
      },
      /plus the drain \(SHUTDOWN_TIMEOUT_MS, 28 s\)/,
    ],
  ] as const)("refuses %s", (_what, change, message) => {
    const problems = rolloutProblems(changed(name, "Deployment", change));
    expect(problems.join("\n")).toMatch(message);
  });

  it("refuses a Deployment no PodDisruptionBudget selects, and a budget that allows no disruption", () => {
    const withoutPdb = objectsOf(name).filter((o) => o.kind !== "PodDisruptionBudget");
    expect(rolloutProblems(withoutPdb).join("\n")).toMatch(/no PodDisruptionBudget selects its pods/);
    const elsewhere = changed(name, "PodDisruptionBudget", (p) => (p.spec.selector.matchLabels = { app: "other" }));
    expect(rolloutProblems(elsewhere).join("\n")).toMatch(/no PodDisruptionBudget selects its pods/);
    const frozen = changed(name, "PodDisruptionBudget", (p) => {
      delete p.spec.minAvailable;
      p.spec.maxUnavailable = 0;
    });
    expect(rolloutProblems(frozen).join("\n")).toMatch(/allows no disruption/);
  });

  it("reads the drain from the container's env, else a ConfigMap it takes envFrom, else kit's default", () => {
    const c = { envFrom: [{ configMapRef: { name: "x-config" } }], env: [] as Any[] };
    expect(drainMs(c, [])).toBe(DEFAULT_DRAIN_MS);
    expect(
      drainMs(c, [{ kind: "ConfigMap", metadata: { name: "x-config" }, data: { SHUTDOWN_TIMEOUT_MS: "9000" } }]),
    ).toBe(9000);
    c.env.push({ name: "SHUTDOWN_TIMEOUT_MS", value: "4000" });
    expect(drainMs(c, [])).toBe(4000);
    expect(preStopSeconds({ lifecycle: { preStop: { sleep: { seconds: 7 } } } })).toBe(7);
    expect(preStopSeconds({})).toBeUndefined();
  });
});
