// Prints the distributed bench's tables (Markdown): closed loop, open loop, the ratios and the
// run's conditions; a row with errors fails the run.
import { readFileSync } from "node:fs";
import type { OpenLoopRow, Row } from "./rows.js";
import { duration, rounds, STACK_NODE_VERSION, tokenCount } from "./stack.js";

export function printReport(rows: readonly Row[], openRows: readonly OpenLoopRow[], ratios: readonly string[]): void {
  // Every process sampled, in this order; a column no row used is left out.
  const cpuCols = [
    "gateway",
    "gateway, log off",
    "identity",
    "crm-data",
    "revenue",
    "scheduling",
    "analytics",
    "webhooks",
    "webhooks-delivery",
    "request-logs",
    "postgres",
    "redis",
    "kafka",
    "bare",
    "floor",
    "gw plain",
    "gw traced",
    "load generator",
  ].filter((c) => [...rows, ...openRows].some((r) => (r.cpu[c] ?? 0) > 0.0005));
  const cpuCells = (cpu: Record<string, number>) =>
    cpuCols.map((c) => (cpu[c] === undefined || cpu[c] === 0 ? "–" : cpu[c].toFixed(3))).join(" | ");
  console.log(`\n| closed loop | req/s | p50 ms | p99 ms | requests | errors | CPU ms/req: ${cpuCols.join(" | ")} |`);
  console.log(`|---|---|---|---|---|---|${cpuCols.map(() => "---").join("|")}|`);
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.requests} | ${r.errors} | ${cpuCells(r.cpu)} |`,
    );
  }
  if (openRows.length) {
    console.log(
      `\n| open loop GET /organizations/me, rate | sent req/s | p50 ms | p99 ms | worst second: p99 ms (its second) | max ms | errors | late sends | CPU ms/req: ${cpuCols.join(" | ")} |`,
    );
    console.log(`|---|---|---|---|---|---|---|---|${cpuCols.map(() => "---").join("|")}|`);
    for (const r of openRows) {
      console.log(
        `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.worstSecond.p99.toFixed(1)} (${r.worstSecond.at}) | ${r.max.toFixed(1)} | ${r.errors} | ${r.late} | ${cpuCells(r.cpu)} |`,
      );
    }
    printSeconds(openRows);
  }
  console.log(`\n${ratios.join("\n")}`);
  console.log(
    `the stack, the bare route and the floor proxy on node ${STACK_NODE_VERSION}, the load generator on ${process.version}; ${duration}s per target, ${rounds} round(s), ${tokenCount} tokens, rate limits on, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}\n`,
  );
  const failed = [...rows, ...openRows].filter((r) => r.errors > 0);
  if (failed.length) {
    console.error(`errors in: ${failed.map((r) => r.name).join(", ")}`);
    process.exitCode = 1;
  }
}

/**
 * Each open-loop row second by second: its p99 beside what could have held it up (rows.ts,
 * OpenLoopSecond), so a bad second can be laid at the target's, the generator's or the
 * machine's door.
 */
function printSeconds(openRows: readonly OpenLoopRow[]): void {
  const line = (label: string, values: (string | undefined)[]) =>
    `| ${label} | ${values.map((v) => v ?? "–").join(" | ")} |`;
  for (const r of openRows) {
    console.log(`\n| ${r.name}, second | ${r.seconds.map((_, at) => at).join(" | ")} |`);
    console.log(`|---|${r.seconds.map(() => "---").join("|")}|`);
    console.log(
      line(
        "p99 ms",
        r.seconds.map((s) => s.p99.toFixed(1)),
      ),
    );
    // The target's CPU, then the two processes busiest in the row's worst second besides it.
    const worst = r.worstSecond.cpuMs;
    const others = Object.keys(worst)
      .filter((name) => name !== r.column)
      .sort((a, b) => (worst[b] ?? 0) - (worst[a] ?? 0))
      .slice(0, 2);
    for (const name of [...(r.column ? [r.column] : []), ...others]) {
      console.log(
        line(
          `${name}'s CPU ms`,
          r.seconds.map((s) => s.cpuMs[name]?.toFixed(0)),
        ),
      );
    }
    for (const name of Object.keys(r.seconds[0]?.runtime ?? {})) {
      console.log(
        line(
          `${name}'s GC ms`,
          r.seconds.map((s) => s.runtime[name]?.gcMs.toFixed(1)),
        ),
      );
      console.log(
        line(
          `${name}'s loop held up, max ms`,
          r.seconds.map((s) => s.runtime[name]?.loopDelayMaxMs.toFixed(1)),
        ),
      );
    }
    console.log(
      line(
        "generator's loop held up, max ms",
        r.seconds.map((s) => s.generatorDelayMs.toFixed(1)),
      ),
    );
    console.log(
      line(
        "machine: steal ms",
        r.seconds.map((s) => s.stealMs.toFixed(0)),
      ),
    );
    console.log(
      line(
        "machine: idle %",
        r.seconds.map((s) => s.idlePct.toFixed(0)),
      ),
    );
  }
}
