// What `npm start` prints once it listens: where everything is, and the exact settings the
// CLI needs for the ports it is on.

export interface BannerInput {
  /** The gateway's address as fastify reports it, e.g. http://127.0.0.1:8080. */
  address: string;
  host: string;
  port: number;
  /** The admin plane's port; undefined when it is off. */
  adminPort: number | undefined;
  /** The sandbox keys file; undefined when the sandbox is off. */
  keysFile: string | undefined;
  seeded: boolean;
  dataDir: string;
}

export const DEFAULT_PORT = 8080;

/** The admin plane's port when ADMIN_PORT is not set: the one after PORT (8081 by default), as the CLI assumes. */
export function defaultAdminPort(port: number): number {
  return port === 0 ? 0 : port + 1;
}

/** A host the CLI can reach: a wildcard listen address is reached on loopback. */
function reachableHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * The lines the CLI needs: nothing on the default ports; otherwise the PLATFORM_URL export
 * (from which the CLI derives the API and, at the next port, the admin plane) and the
 * PLATFORM_ADMIN_URL export only when the admin plane is not at the next port.
 */
export function cliExports(host: string, port: number, adminPort: number | undefined): string[] {
  const h = reachableHost(host);
  const onDefaults = h === "127.0.0.1" && port === DEFAULT_PORT && (adminPort ?? DEFAULT_PORT + 1) === DEFAULT_PORT + 1;
  if (onDefaults) return [];
  const exports = [`export PLATFORM_URL=http://${h}:${port}`];
  if (adminPort !== undefined && adminPort !== defaultAdminPort(port)) {
    exports.push(`export PLATFORM_ADMIN_URL=http://${h}:${adminPort}`);
  }
  return exports;
}

export function bannerLines(b: BannerInput): string[] {
  const exports = cliExports(b.host, b.port, b.adminPort);
  const cli =
    exports.length === 0
      ? ["  CLI:             npx platform --help (these are its default ports: nothing to set)"]
      : [
          "  CLI:             in each shell where you run npx platform … (listen, trigger and the admin commands):",
          ...exports.map((e) => `                     ${e}`),
        ];
  return [
    "",
    `Platform Integration API (embedded) listening on ${b.address}/api/v1alpha1`,
    `  Console:         ${b.address}/console (sign in with a sandbox key)`,
    `  API docs:        ${b.address}/docs`,
    `  OpenAPI:         ${b.address}/api/v1alpha1/openapi.json`,
    b.adminPort !== undefined ? `  Admin plane:     http://${reachableHost(b.host)}:${b.adminPort}` : "",
    ...cli,
    b.keysFile
      ? `  Sandbox keys:    ${b.keysFile}${b.seeded ? " (sandbox seeded on this first start)" : ""}  — or: npx platform sandbox keys`
      : "",
    `  Data:            ${b.dataDir} (kept across restarts; one process at a time)`,
    exports.length === 0
      ? "  Other ports:     PORT=8090 npm start (the admin plane follows on 8091), then export PLATFORM_URL=http://127.0.0.1:8090"
      : "",
    "",
  ].filter((l) => l !== "");
}
