export * from "./gen/platform/crm/v1/account_pb.js";
export * from "./gen/platform/crm/v1/activity_pb.js";
export * from "./gen/platform/crm/v1/admin_pb.js";
export * from "./gen/platform/crm/v1/contact_pb.js";
export * from "./gen/platform/crm/v1/references_pb.js";
export * from "./gen/platform/crm/v1/transcript_pb.js";
