import type net from "node:net";

/**
 * Listens with SO_REUSEPORT (Node ≥ 22.12's `reusePort`): a second instance of the process can
 * bind the same port while the first still serves it, so a replacement is listening before the
 * old one stops (`npm run stack -- roll`, docs/deploying.md). The kernel spreads new connections
 * over every listener of the port; one that closes its socket resets the connections still
 * queued in its accept backlog, unless `net.ipv4.tcp_migrate_req` is 1, which hands them to the
 * other listener. In a pod nothing else binds the port, and the flag changes nothing. Older Nodes
 * ignore the option (and a second instance then fails with EADDRINUSE, as before).
 */
export function listenShared(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host, reusePort: reusePort() } as net.ListenOptions, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * Only where replacement is the plan: `npm run stack` sets LISTEN_REUSE_PORT=1 for its processes.
 * Anywhere else a taken port must stay an EADDRINUSE at start, not a silent share of the traffic
 * with whatever process holds it (a second stack, a forgotten instance).
 */
export const reusePort = (env: NodeJS.ProcessEnv = process.env): boolean => env.LISTEN_REUSE_PORT === "1";
