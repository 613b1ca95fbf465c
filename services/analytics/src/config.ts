import { adminPlaneConfig, type ConfigOf, commonConfig, loadConfig, parse, serviceConfig } from "@platform/kit/config";

/** The analytics service's settings; `describeConfig(analyticsConfigSpec)` lists them. */
export const analyticsConfigSpec = {
  ...commonConfig,
  ...serviceConfig,
  ...adminPlaneConfig,
  DATABASE_URL: {
    description: "Postgres URL of the analytics database (created when missing)",
    default: "postgres://postgres@127.0.0.1:5432/platform_analytics",
    sensitive: true,
    parse: parse.url,
  },
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7105, parse: parse.port },
  ADMIN_PORT: {
    description: "Port of the admin plane (email event ingestion, blast metadata)",
    default: 8085,
    parse: parse.port,
  },
  CRM_URL: {
    description: "crm-data's Connect-RPC address, to resolve recipient emails to contacts",
    default: "http://127.0.0.1:7103",
    parse: parse.url,
  },
};

export type AnalyticsConfig = ConfigOf<typeof analyticsConfigSpec>;

export function loadAnalyticsConfig(env: NodeJS.ProcessEnv = process.env): AnalyticsConfig {
  return loadConfig(analyticsConfigSpec, env);
}
