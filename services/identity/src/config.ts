import { adminPlaneConfig, type ConfigOf, commonConfig, loadConfig, parse, serviceConfig } from "@platform/kit/config";

/** The identity service's settings; `describeConfig(identityConfigSpec)` lists them. */
export const identityConfigSpec = {
  ...commonConfig,
  ...serviceConfig,
  ...adminPlaneConfig,
  DATABASE_URL: {
    description: "Postgres URL of the identity database (created when missing)",
    default: "postgres://postgres@127.0.0.1:5432/platform_identity",
    sensitive: true,
    parse: parse.url,
  },
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7101, parse: parse.port },
  ADMIN_PORT: { description: "Port of the admin plane (tokens, partners)", default: 8081, parse: parse.port },
};

export type IdentityConfig = ConfigOf<typeof identityConfigSpec>;

export function loadIdentityConfig(env: NodeJS.ProcessEnv = process.env): IdentityConfig {
  return loadConfig(identityConfigSpec, env);
}
