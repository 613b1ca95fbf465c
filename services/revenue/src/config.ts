import { adminPlaneConfig, type ConfigOf, commonConfig, loadConfig, parse, serviceConfig } from "@platform/kit/config";

/** The revenue service's settings; `describeConfig(revenueConfigSpec)` lists them. */
export const revenueConfigSpec = {
  ...commonConfig,
  ...serviceConfig,
  ...adminPlaneConfig,
  DATABASE_URL: {
    description: "Postgres URL of the revenue database (created when missing)",
    default: "postgres://postgres@127.0.0.1:5432/platform_revenue",
    sensitive: true,
    parse: parse.url,
  },
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7104, parse: parse.port },
  ADMIN_PORT: { description: "Port of the admin plane (deal schemas, read-only)", default: 8084, parse: parse.port },
  CRM_URL: {
    description: "crm-data's Connect address (account, contact and transcript references)",
    default: "http://127.0.0.1:7103",
    parse: parse.url,
  },
  IDENTITY_URL: {
    description: "identity's Connect address (deal owners: users and the org's administrator)",
    default: "http://127.0.0.1:7101",
    parse: parse.url,
  },
};

export type RevenueConfig = ConfigOf<typeof revenueConfigSpec>;

export function loadRevenueConfig(env: NodeJS.ProcessEnv = process.env): RevenueConfig {
  return loadConfig(revenueConfigSpec, env);
}
