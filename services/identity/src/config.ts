import {
  adminPlaneConfig,
  type ConfigOf,
  commonConfig,
  loadConfig,
  parse,
  serviceConfig,
  serviceDatabaseAndPort,
} from "@platform/kit/config";

/** The identity service's settings; `describeConfig(identityConfigSpec)` lists them. */
export const identityConfigSpec = {
  ...commonConfig,
  ...serviceConfig,
  ...adminPlaneConfig,
  ...serviceDatabaseAndPort("identity", "identity", 7101),
  ADMIN_PORT: { description: "Port of the admin plane (tokens, partners)", default: 8081, parse: parse.port },
};

export type IdentityConfig = ConfigOf<typeof identityConfigSpec>;

export function loadIdentityConfig(env: NodeJS.ProcessEnv = process.env): IdentityConfig {
  return loadConfig(identityConfigSpec, env);
}
