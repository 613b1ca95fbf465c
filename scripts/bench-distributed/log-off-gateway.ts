// The request log's cost (issue 52, item 7): the stack's gateway runs with its request log on
// (the default); this starts its twin, the same build on the same node with the same flags and
// settings in front of the same services, but REQUEST_LOG=off, so the bench can put the two side
// by side in one run and compare the gateway's CPU per read.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, openSync } from "node:fs";
import { join } from "node:path";
import { portOpen } from "../bench-support.js";
import { CONTEXT_SECRET, env, GATEWAY, log, port, REDIS_URL, RUN_DIR, STACK_NODE } from "./stack.js";

export interface LogOffGateway {
  child: ChildProcess;
  url: string;
}

const local = (name: string, fallback: number) => `http://127.0.0.1:${port(name, fallback)}`;

export async function startLogOffGateway(): Promise<LogOffGateway> {
  const gatewayPort = port("LOG_OFF_PORT", port("GATEWAY_PORT", 8080) + 10);
  const url = `http://127.0.0.1:${gatewayPort}`;
  if (await portOpen(url)) throw new Error(`LOG_OFF_PORT ${gatewayPort} is taken; set LOG_OFF_PORT to a free port`);
  // As scripts/stack.sh runs the gateway: its compiled bundle when there is one, else the sources.
  const compiled = existsSync("dist/gateway/main.js");
  const flags = execFileSync("bash", ["scripts/node-flags.sh", STACK_NODE], { encoding: "utf8" }).trim().split(/\s+/);
  const args = [
    ...flags.filter(Boolean),
    ...(compiled ? ["dist/gateway/main.js"] : ["--import", "tsx", "gateway/src/main.ts"]),
  ];
  const logFile = join(RUN_DIR, "gateway-log-off.log");
  log(`the gateway with REQUEST_LOG=off on ${url} (${compiled ? "dist/" : "sources"}, log ${logFile})…`);
  const child = spawn(STACK_NODE, args, {
    env: {
      ...env,
      PORT: String(gatewayPort),
      HOST: "127.0.0.1",
      IDENTITY_URL: local("IDENTITY_PORT", 7101),
      SCHEDULING_URL: local("SCHEDULING_PORT", 7102),
      CRM_URL: local("CRM_PORT", 7103),
      REVENUE_URL: local("REVENUE_PORT", 7104),
      ANALYTICS_URL: local("ANALYTICS_PORT", 7105),
      WEBHOOKS_URL: local("WEBHOOKS_PORT", 7106),
      REQUEST_LOGS_URL: local("REQUEST_LOGS_PORT", 7107),
      REDIS_URL,
      KAFKA_BROKERS: env.KAFKA_BROKERS ?? `127.0.0.1:${env.KAFKA_PORT ?? 19092}`,
      PLATFORM_CONTEXT_SECRET: CONTEXT_SECRET,
      REQUEST_LOG: "off",
    },
    stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")],
  });
  for (let i = 0; i < 240; i++) {
    if (await portOpen(url)) return { child, url };
    if (child.exitCode !== null) throw new Error(`the log-off gateway exited with ${child.exitCode}; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill();
  throw new Error(`the log-off gateway did not listen on ${url} within 60 s (the stack's: ${GATEWAY})`);
}
