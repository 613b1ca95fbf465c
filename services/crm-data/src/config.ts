import { type ConfigOf, parse } from "@platform/kit/config";
import { adminPlaneServiceConfig, configLoader } from "@platform/kit/service-config";

/** The crm-data service's settings; `describeConfig(crmConfigSpec)` lists them. */
export const crmConfigSpec = {
  ...adminPlaneServiceConfig("crm-data", "crm"),
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7103, parse: parse.port },
  ADMIN_PORT: {
    description: "Port of the ingestion plane (CRM sync, recording bot)",
    default: 8083,
    parse: parse.port,
  },
};

export type CrmConfig = ConfigOf<typeof crmConfigSpec>;

export const loadCrmConfig = configLoader(crmConfigSpec);
