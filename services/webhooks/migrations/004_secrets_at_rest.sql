-- Signing secrets at rest: `secret` and `previous_secret` hold AES-256-GCM envelopes sealed
-- under WEBHOOK_SECRET_KEY, `enc:v1:<key id>:<iv>.<tag>.<ciphertext>`, instead of whsec_ text.
-- SQL does not have the key, so the rows written before this migration are sealed by the
-- service right after it migrates (src/store/sealing.ts, at every start: it also re-seals
-- rows of a retired key after a rotation, and the secrets inside stored Idempotency-Key
-- responses of create and rotate). Until then a clear whsec_ value still opens as it is.
-- The constraint names the only two forms a stored secret may take.
ALTER TABLE webhooks.subscriptions
  ADD CONSTRAINT subscriptions_secret_sealed_or_legacy
  CHECK (secret LIKE 'enc:v1:%' OR secret LIKE 'whsec\_%'),
  ADD CONSTRAINT subscriptions_previous_secret_sealed_or_legacy
  CHECK (previous_secret IS NULL OR previous_secret LIKE 'enc:v1:%' OR previous_secret LIKE 'whsec\_%');

COMMENT ON COLUMN webhooks.subscriptions.secret IS
  'Signing secret sealed with AES-256-GCM under WEBHOOK_SECRET_KEY: enc:v1:<key id>:<iv>.<tag>.<ciphertext>';
