/**
 * npm run bench -- --suite rpc: the CPU one unary Connect call costs each side on loopback,
 * Connect-ES's Node transport and adapter (HTTP/2) against kit's lean unary path
 * (libs/kit/src/unary-transport.ts, unary-handler.ts) over HTTP/2 and over HTTP/1.1 (what
 * kit's client uses for unary calls), the pairings side by side in one run.
 * Client and server are processes of their own (scripts/bench-rpc/peer.ts); the call is
 * identity's GetOrganization answered from memory, so what is measured is the RPC path.
 *
 *   npm run bench -- --suite rpc [--duration 5] [--in-flight 10] [--rounds 2]
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { cpuMsOf, loadAverage, stringFlags, suiteArgs } from "./bench-support.js";

const args = suiteArgs(
  stringFlags({ duration: "5", "in-flight": "10", rounds: "2", port: "19640" }),
  "usage: npm run bench -- --suite rpc [--duration SECONDS] [--in-flight N] [--rounds N] [--port N]",
);
const peer = fileURLToPath(new URL("./bench-rpc/peer.ts", import.meta.url));
// Client → server. Connect-ES's server alone speaks only HTTP/2, so kit's HTTP/1.1 client calls kit's server.
const PAIRS = [
  ["connect", "connect"],
  ["connect", "lean"],
  ["lean-h2", "connect"],
  ["lean-h2", "lean"],
  ["lean", "lean"],
] as const;

function start(argv: string[]) {
  return spawn(process.execPath, ["--import", "tsx", peer, ...argv], { stdio: ["ignore", "pipe", "inherit"] });
}

function firstLine(child: ReturnType<typeof start>): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const end = out.indexOf("\n");
      if (end !== -1) resolve(out.slice(0, end));
    });
    child.once("exit", (code) => reject(new Error(`peer exited (${code}) before answering: ${out}`)));
  });
}

interface Row {
  client: string;
  server: string;
  callsPerSecond: number;
  clientUs: number;
  serverUs: number;
}

async function pair(clientMode: string, serverMode: string, port: number): Promise<Row> {
  const server = start(["server", serverMode, String(port)]);
  try {
    await firstLine(server);
    const serverBefore = cpuMsOf(server.pid!);
    const client = start(["client", clientMode, String(port), args["in-flight"], args.duration]);
    const result = JSON.parse(await firstLine(client)) as { calls: number; seconds: number; cpuMs: number };
    // The server's CPU over the client's whole life includes its 300 warm-up calls.
    const serverMs = cpuMsOf(server.pid!) - serverBefore;
    const calls = result.calls + 300;
    return {
      client: clientMode,
      server: serverMode,
      callsPerSecond: Math.round(result.calls / result.seconds),
      clientUs: (result.cpuMs / result.calls) * 1000,
      serverUs: (serverMs / calls) * 1000,
    };
  } finally {
    server.kill();
  }
}

console.error(
  `node ${process.version}, ${args.duration}s per pairing, ${args["in-flight"]} calls in flight, load average ${loadAverage()}`,
);
const rows: Row[] = [];
let port = Number(args.port);
for (let round = 1; round <= Number(args.rounds); round++) {
  for (const [client, server] of PAIRS) {
    process.stderr.write(`round ${round}: ${client} client → ${server} server…\n`);
    rows.push(await pair(client, server, port++));
  }
}
console.log("\n| client → server | calls/s | client CPU µs/call | server CPU µs/call | both |");
console.log("|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.client} → ${r.server} | ${r.callsPerSecond} | ${r.clientUs.toFixed(0)} | ${r.serverUs.toFixed(0)} | ${(r.clientUs + r.serverUs).toFixed(0)} |`,
  );
}
console.log(
  `\nconnect: Connect-ES's createConnectTransport / connectNodeAdapter (HTTP/2); lean: kit's httpTransport (unary calls over HTTP/1.1, through undici) / serveConnect; lean-h2: kit's httpTransport with unary calls over HTTP/2. Load average at end ${loadAverage()}.`,
);
