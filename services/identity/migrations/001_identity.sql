-- Identity: organizations, their users, API tokens and partner relationships.
-- Organizations and users reference each other (the contractual administrator is a user of
-- the org), so that foreign key is deferred: both rows are written in one transaction.

CREATE TABLE identity.organizations (
  id text PRIMARY KEY,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  primary_email_domain text NOT NULL,
  -- Verified domains only; the API can switch the primary among them but never add one.
  email_domains text[] NOT NULL CHECK (cardinality(email_domains) > 0),
  administrator_user_id text NOT NULL,
  industry text NOT NULL DEFAULT '',
  employee_count integer NOT NULL CHECK (employee_count BETWEEN 1 AND 1000000),
  logo_url text,
  crm_org_id text,
  -- Only partner-admin organizations may hold partner:act-as-child or the Partner Admin role.
  partner_admin boolean NOT NULL DEFAULT false,
  license_tier text NOT NULL CHECK (license_tier IN ('free', 'starter', 'professional', 'enterprise')),
  seat_total integer NOT NULL CHECK (seat_total >= 0),
  features jsonb NOT NULL CHECK (
    jsonb_typeof(features -> 'smartScheduling') = 'boolean'
    AND jsonb_typeof(features -> 'teamCalendarScheduling') = 'boolean'
    AND jsonb_typeof(features -> 'replyTracking') = 'boolean'
    AND jsonb_typeof(features -> 'emailBlast') = 'boolean'
    AND jsonb_typeof(features -> 'dealIntelApp') = 'boolean'
    AND jsonb_typeof(features -> 'meetingAi') = 'boolean'
  ),
  license_as_of timestamptz NOT NULL,
  version bigint NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK (primary_email_domain = ANY (email_domains))
);

CREATE TABLE identity.users (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES identity.organizations (id),
  -- Case-normalised on invite so uniqueness is case-insensitive.
  email text NOT NULL CHECK (email = lower(email) AND position('@' IN email) > 1),
  first_name text,
  last_name text,
  display_name text NOT NULL,
  title text,
  department text,
  phone_number text,
  profile_image_url text,
  role text NOT NULL CHECK (role IN ('User', 'Admin', 'Partner Admin')),
  active boolean NOT NULL DEFAULT true,
  -- "expired" is not stored: it is a pending invitation older than 14 days by the clock.
  invitation_status text NOT NULL CHECK (invitation_status IN ('accepted', 'pending')),
  invited_at timestamptz,
  invited_by_user_id text REFERENCES identity.users (id),
  last_login_at timestamptz,
  two_factor_enabled boolean NOT NULL DEFAULT false,
  crm_user_id text,
  version bigint NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (org_id, id),
  CHECK (invitation_status = 'accepted' OR invited_at IS NOT NULL)
);

-- Active and pending users hold their email; a deactivated user's email may be invited again.
CREATE UNIQUE INDEX users_org_email_live ON identity.users (org_id, email) WHERE active;

ALTER TABLE identity.organizations
  ADD CONSTRAINT organizations_administrator_fk
  FOREIGN KEY (id, administrator_user_id) REFERENCES identity.users (org_id, id)
  DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE identity.api_tokens (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES identity.organizations (id),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  -- SHA-256 hex of the key; the key itself is never stored.
  key_hash text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  key_preview text NOT NULL,
  scopes text[] NOT NULL DEFAULT '{}',
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);

CREATE INDEX api_tokens_org_created ON identity.api_tokens (org_id, created_at DESC, id DESC);

CREATE TABLE identity.partner_relationships (
  parent_org_id text NOT NULL REFERENCES identity.organizations (id),
  child_org_id text NOT NULL REFERENCES identity.organizations (id),
  granted_scopes text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  revoked_at timestamptz,
  PRIMARY KEY (parent_org_id, child_org_id),
  CHECK (parent_org_id <> child_org_id)
);

-- A child has at most one active parent.
CREATE UNIQUE INDEX partner_relationships_one_active_parent
  ON identity.partner_relationships (child_org_id) WHERE revoked_at IS NULL;
