import { type ConfigOf, parse } from "@platform/kit/config";
import { adminPlaneServiceConfig, configLoader, connectAddress } from "@platform/kit/service-config";

/** The revenue service's settings; `describeConfig(revenueConfigSpec)` lists them. */
export const revenueConfigSpec = {
  ...adminPlaneServiceConfig("revenue", "revenue"),
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7104, parse: parse.port },
  ADMIN_PORT: { description: "Port of the admin plane (deal schemas, read-only)", default: 8084, parse: parse.port },
  CRM_URL: connectAddress("crm-data's Connect address (account, contact and transcript references)", 7103),
  IDENTITY_URL: connectAddress("identity's Connect address (deal owners: users and the org's administrator)", 7101),
};

export type RevenueConfig = ConfigOf<typeof revenueConfigSpec>;

export const loadRevenueConfig = configLoader(revenueConfigSpec);
