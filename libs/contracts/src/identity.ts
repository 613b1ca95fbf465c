export * from "./gen/platform/identity/v1/admin_pb.js";
export * from "./gen/platform/identity/v1/gateway_auth_pb.js";
export * from "./gen/platform/identity/v1/organization_pb.js";
export * from "./gen/platform/identity/v1/partner_pb.js";
export * from "./gen/platform/identity/v1/user_pb.js";
