import {
  adminPlaneConfig,
  type ConfigOf,
  commonConfig,
  loadConfig,
  parse,
  serviceConfig,
  serviceDatabaseAndPort,
} from "@platform/kit/config";

/** The crm-data service's settings; `describeConfig(crmConfigSpec)` lists them. */
export const crmConfigSpec = {
  ...commonConfig,
  ...serviceConfig,
  ...adminPlaneConfig,
  ...serviceDatabaseAndPort("crm-data", "crm", 7103),
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
