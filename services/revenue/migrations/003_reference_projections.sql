-- Local projections of what deals and Q&As reference in other contexts, so that a write needs
-- only revenue's own database: crm-data's accounts and contacts (fed by its AccountChanged and
-- ContactChanged events), identity's users and each organization's administrator, the default
-- deal owner (filled when first read through, dropped when identity announces a change that
-- alters them). An id missing here is read through from its owner once and then kept.
CREATE TABLE revenue.account_refs (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  name text NOT NULL,
  -- When crm-data last described it (event time, or the read-through's time).
  seen_at timestamptz NOT NULL
);

CREATE TABLE revenue.contact_refs (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  account_id text NOT NULL,
  display_name text NOT NULL,
  email text NOT NULL,
  seen_at timestamptz NOT NULL
);

CREATE TABLE revenue.user_refs (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  display_name text NOT NULL,
  seen_at timestamptz NOT NULL
);

CREATE TABLE revenue.org_refs (
  org_id text PRIMARY KEY,
  administrator_user_id text NOT NULL,
  administrator_display_name text NOT NULL,
  seen_at timestamptz NOT NULL
);
CREATE INDEX org_refs_administrator ON revenue.org_refs (administrator_user_id);
