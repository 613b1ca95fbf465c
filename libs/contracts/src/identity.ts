export * from "./gen/platform/identity/v1/admin_pb.js";
export * from "./gen/platform/identity/v1/gateway_auth_pb.js";
export * from "./gen/platform/identity/v1/organization_pb.js";
