export * from "./gen/platform/webhooks/v1/webhook_subscription_pb.js";
