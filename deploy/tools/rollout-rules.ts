// The settings a Deployment needs so that replacing its pods loses no request (docs/deploying.md),
// checked on rendered objects by validate-deploy.ts and tested in deploy/test/rollout.test.ts:
//  - a rolling update that never goes below the wanted replicas (maxUnavailable: 0, maxSurge > 0);
//  - a readiness probe (the processes fail it from SIGTERM on: kit's health, the gateway's /readyz);
//  - a preStop pause, during which the endpoint leaves the Service before the process stops accepting;
//  - a termination grace period longer than that pause plus the process's drain (SHUTDOWN_TIMEOUT_MS);
//  - a PodDisruptionBudget that selects its pods and still lets one go (a node drain must proceed).

/** The drain every process has unless SHUTDOWN_TIMEOUT_MS says otherwise (libs/kit/src/config.ts). */
export const DEFAULT_DRAIN_MS = 20_000;
/** Kubernetes' default termination grace period. */
const DEFAULT_GRACE_S = 30;

// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects, checked field by field
type Any = any;

/** The seconds a preStop hook waits: `exec: sleep N` or the `sleep` action; undefined without one. */
export function preStopSeconds(container: Any): number | undefined {
  const hook = container?.lifecycle?.preStop;
  if (!hook) return undefined;
  if (hook.sleep?.seconds !== undefined) return Number(hook.sleep.seconds);
  const command: string[] = hook.exec?.command ?? [];
  const at = command.findIndex((part) => /(^|\/)sleep$/.test(part));
  return at >= 0 ? Number(command[at + 1]) : 0;
}

/** SHUTDOWN_TIMEOUT_MS of a container: its env, else a ConfigMap among `objects` it takes envFrom. */
export function drainMs(container: Any, objects: Any[]): number {
  const own = (container.env ?? []).find((e: Any) => e.name === "SHUTDOWN_TIMEOUT_MS")?.value;
  if (own !== undefined) return Number(own);
  for (const from of container.envFrom ?? []) {
    const name = from.configMapRef?.name;
    const map = objects.find((o) => o?.kind === "ConfigMap" && o.metadata?.name === name);
    if (map?.data?.SHUTDOWN_TIMEOUT_MS !== undefined) return Number(map.data.SHUTDOWN_TIMEOUT_MS);
  }
  return DEFAULT_DRAIN_MS;
}

const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** What stands between these objects' Deployments and a rolling update without errors; [] when nothing. */
export function rolloutProblems(objects: Any[]): string[] {
  const problems: string[] = [];
  const pdbs = objects.filter((o) => o?.kind === "PodDisruptionBudget");
  for (const d of objects.filter((o) => o?.kind === "Deployment")) {
    const name = `Deployment ${d.metadata?.name}`;
    const strategy = d.spec?.strategy ?? {};
    const rolling = strategy.rollingUpdate ?? {};
    if ((strategy.type ?? "RollingUpdate") !== "RollingUpdate")
      problems.push(`${name}: strategy ${strategy.type}, not RollingUpdate`);
    if (rolling.maxUnavailable === undefined || String(rolling.maxUnavailable).replace("%", "") !== "0") {
      problems.push(`${name}: rollingUpdate.maxUnavailable must be 0 (a new pod is ready before an old one goes)`);
    }
    if (rolling.maxSurge !== undefined && String(rolling.maxSurge).replace("%", "") === "0") {
      problems.push(`${name}: rollingUpdate.maxSurge 0 with maxUnavailable 0 never makes progress`);
    }
    const pod = d.spec?.template?.spec ?? {};
    const grace = Number(pod.terminationGracePeriodSeconds ?? DEFAULT_GRACE_S);
    for (const c of pod.containers ?? []) {
      const where = `${name}, container ${c.name}`;
      if (!c.readinessProbe)
        problems.push(`${where}: no readinessProbe (a pod must leave the Service while it drains)`);
      const pause = preStopSeconds(c);
      if (pause === undefined || pause <= 0) {
        problems.push(
          `${where}: no preStop pause (the endpoint must leave the Service before the process stops accepting)`,
        );
      }
      const drain = drainMs(c, objects) / 1000;
      if (grace <= (pause ?? 0) + drain) {
        problems.push(
          `${where}: terminationGracePeriodSeconds ${grace} is not longer than the preStop pause (${pause ?? 0} s) plus the drain (SHUTDOWN_TIMEOUT_MS, ${drain} s)`,
        );
      }
    }
    const labels = d.spec?.template?.metadata?.labels;
    const budget = pdbs.filter((p) => selects(p.spec?.selector?.matchLabels, labels));
    if (budget.length === 0) problems.push(`${name}: no PodDisruptionBudget selects its pods`);
    for (const p of budget) {
      const max = p.spec?.maxUnavailable;
      const min = p.spec?.minAvailable;
      if ((max !== undefined && String(max).replace("%", "") === "0") || String(min) === "100%") {
        problems.push(`PodDisruptionBudget ${p.metadata?.name}: allows no disruption, so a node drain never ends`);
      }
    }
  }
  return problems;
}
