export * from "../gen/platform/events/email/v1/events_pb.js";
