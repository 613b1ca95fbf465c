-- Users through the API, managed organizations as a partner sees them, and the delegation audit.

-- Expired trial, failed payment, security incident or similar; set by operations, read by partners.
ALTER TABLE identity.organizations ADD COLUMN has_active_issues boolean NOT NULL DEFAULT false;

-- An invitation sent through the API has no inviting user; the inviter's name ("Acme (API)")
-- is kept instead, as it read when the invitation went out.
ALTER TABLE identity.users ADD COLUMN invited_by_name text;

-- Keyset pages of the default and the most common sorts (ties broken by id).
CREATE INDEX users_org_created ON identity.users (org_id, created_at, id);
CREATE INDEX users_org_updated ON identity.users (org_id, updated_at, id);

-- One row per request a partner made on behalf of a child, from the gateway's events. The id
-- is the event id, so a redelivered event cannot add a second row.
CREATE TABLE identity.delegation_audit (
  id text PRIMARY KEY,
  parent_org_id text NOT NULL,
  org_id text NOT NULL,
  token_id text NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  status int NOT NULL,
  request_id text NOT NULL,
  time timestamptz NOT NULL
);

CREATE INDEX delegation_audit_parent_time ON identity.delegation_audit (parent_org_id, time DESC);
CREATE INDEX delegation_audit_org_time ON identity.delegation_audit (org_id, time DESC);
