import {
  adminPlaneConfig,
  type ConfigOf,
  type ConfigSpec,
  commonConfig,
  loadConfig,
  parse,
  serviceConfig,
} from "./config.js";

// The settings that every service's config.ts declares the same way, written once. PORT stays
// written out in each config.ts (`PORT: { ..., default: 7101 }`): the deploy tests read the
// port a process listens on from there.

/**
 * DATABASE_URL of a service: the Postgres URL of its own database (created when missing),
 * `platform_<database>` on the local server by default. `note` ends the description.
 */
export function serviceDatabaseUrl(service: string, database: string, note = "") {
  return {
    description: `Postgres URL of the ${service} database (created when missing)${note}`,
    default: `postgres://postgres@127.0.0.1:5432/platform_${database}`,
    sensitive: true,
    parse: parse.url,
  };
}

/**
 * The settings every service process starts with, in this order (the README and `--help` list
 * them so): the common ones, the service runtime's (bus, sandbox, migrations), then its
 * DATABASE_URL. Its own settings follow, PORT first.
 */
export function serviceProcessConfig(service: string, database: string) {
  return { ...commonConfig, ...serviceConfig, DATABASE_URL: serviceDatabaseUrl(service, database) };
}

/** serviceProcessConfig of a service with an admin plane: its bearer secret comes before DATABASE_URL. */
export function adminPlaneServiceConfig(service: string, database: string) {
  return {
    ...commonConfig,
    ...serviceConfig,
    ...adminPlaneConfig,
    DATABASE_URL: serviceDatabaseUrl(service, database),
  };
}

/** The Connect address of another process, on this host at `port` by default. */
export function connectAddress(description: string, port: number) {
  return { description, default: `http://127.0.0.1:${port}`, parse: parse.url };
}

/** A process's `load…Config(env)`: `spec` parsed from `env` (process.env by default), once at start. */
export function configLoader<S extends ConfigSpec>(spec: S): (env?: NodeJS.ProcessEnv) => ConfigOf<S> {
  return (env = process.env) => loadConfig(spec, env);
}
