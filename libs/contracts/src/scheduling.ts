export * from "./gen/platform/scheduling/v1/meeting_pb.js";
export * from "./gen/platform/scheduling/v1/meeting_service_pb.js";
export * from "./gen/platform/scheduling/v1/smart_schedule_pb.js";
