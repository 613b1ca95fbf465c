import { type ConfigOf, parse } from "@platform/kit/config";
import { adminPlaneServiceConfig, configLoader } from "@platform/kit/service-config";

/** The identity service's settings; `describeConfig(identityConfigSpec)` lists them. */
export const identityConfigSpec = {
  ...adminPlaneServiceConfig("identity", "identity"),
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7101, parse: parse.port },
  ADMIN_PORT: { description: "Port of the admin plane (tokens, partners)", default: 8081, parse: parse.port },
};

export type IdentityConfig = ConfigOf<typeof identityConfigSpec>;

export const loadIdentityConfig = configLoader(identityConfigSpec);
