import { type ConfigOf, parse } from "@platform/kit/config";
import { adminPlaneServiceConfig, configLoader, connectAddress } from "@platform/kit/service-config";

/** The analytics service's settings; `describeConfig(analyticsConfigSpec)` lists them. */
export const analyticsConfigSpec = {
  ...adminPlaneServiceConfig("analytics", "analytics"),
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7105, parse: parse.port },
  ADMIN_PORT: {
    description: "Port of the admin plane (email event ingestion, blast metadata)",
    default: 8085,
    parse: parse.port,
  },
  CRM_URL: connectAddress("crm-data's Connect-RPC address, to resolve recipient emails to contacts", 7103),
};

export type AnalyticsConfig = ConfigOf<typeof analyticsConfigSpec>;

export const loadAnalyticsConfig = configLoader(analyticsConfigSpec);
