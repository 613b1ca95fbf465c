-- The W3C traceparent of the request that caused the event, so its deliveries continue that trace.
ALTER TABLE webhooks.events ADD COLUMN traceparent text;
