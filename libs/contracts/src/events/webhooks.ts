export * from "../gen/platform/events/webhooks/v1/events_pb.js";
