import { adminPlaneConfig, type ConfigOf, commonConfig, loadConfig, parse, serviceConfig } from "@platform/kit/config";

/** The crm-data service's settings; `describeConfig(crmConfigSpec)` lists them. */
export const crmConfigSpec = {
  ...commonConfig,
  ...serviceConfig,
  ...adminPlaneConfig,
  DATABASE_URL: {
    description: "Postgres URL of the crm-data database (created when missing)",
    default: "postgres://postgres@127.0.0.1:5432/platform_crm",
    sensitive: true,
    parse: parse.url,
  },
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7103, parse: parse.port },
  ADMIN_PORT: {
    description: "Port of the ingestion plane (CRM sync, recording bot)",
    default: 8083,
    parse: parse.port,
  },
};

export type CrmConfig = ConfigOf<typeof crmConfigSpec>;

export function loadCrmConfig(env: NodeJS.ProcessEnv = process.env): CrmConfig {
  return loadConfig(crmConfigSpec, env);
}
