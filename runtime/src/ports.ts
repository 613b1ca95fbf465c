import { createServer } from "node:net";

/** A port the runtime is about to listen on, with the setting that chose it. */
export interface PlannedPort {
  setting: string;
  port: number;
}

/** Resolves when `port` can be bound on `host`; rejects with the bind error (EADDRINUSE, EACCES) otherwise. */
function probe(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (err: NodeJS.ErrnoException & { port?: number }) => {
      err.port = port;
      reject(err);
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve()));
  });
}

/**
 * Checks, before anything is created or seeded, that every planned port can be bound, so a
 * start that is bound to fail on a port leaves no data directory behind. Port 0 (any free
 * port, or a plane turned off) needs no check. Throws the first bind error, with its `port`.
 * Another process may still take a port in between; the listen that follows reports that
 * the same way.
 */
export async function checkPortsFree(host: string, ports: readonly PlannedPort[]): Promise<void> {
  for (const { port } of ports) {
    if (port !== 0) await probe(host, port);
  }
}
