export * from "../gen/platform/events/identity/v1/events_pb.js";
