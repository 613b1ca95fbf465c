-- crm-data: accounts and contacts as the CRM sync delivers them, projections of meetings
-- and email sends for the activity timelines, and what recording bots report.

-- Accounts are keyed by the CRM's id within the org: the sync upserts on it. The parent is
-- kept as the CRM spells it and resolved when read, so a parent synced later becomes tracked.
CREATE TABLE crm.accounts (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  crm_id text NOT NULL CHECK (crm_id <> ''),
  crm_url text NOT NULL DEFAULT '',
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 300),
  root_domain text CHECK (root_domain = lower(root_domain)),
  fully_qualified_domain text,
  primary_industry text,
  industries text[] NOT NULL DEFAULT '{}',
  employee_count int CHECK (employee_count BETWEEN 1 AND 1000000),
  primary_location text,
  profile_icon_uri text,
  valuation jsonb CHECK (valuation IS NULL OR jsonb_typeof(valuation) = 'object'),
  funding jsonb CHECK (funding IS NULL OR jsonb_typeof(funding) = 'object'),
  parent_crm_id text,
  parent_name text,
  summary text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (org_id, crm_id),
  UNIQUE (org_id, id)
);
CREATE INDEX accounts_org_updated ON crm.accounts (org_id, updated_at DESC, id DESC);
CREATE INDEX accounts_org_domain ON crm.accounts (org_id, root_domain);

-- Contacts point at their account by its CRM id, resolved when read (either may sync first).
CREATE TABLE crm.contacts (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  crm_id text NOT NULL CHECK (crm_id <> ''),
  crm_url text NOT NULL DEFAULT '',
  first_name text NOT NULL,
  last_name text NOT NULL,
  email text NOT NULL CHECK (email = lower(email) AND email LIKE '%_@_%'),
  phone text,
  title text,
  account_crm_id text,
  profile_icon_uri text,
  linked_in_url text,
  summary text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (org_id, crm_id),
  UNIQUE (org_id, id)
);
CREATE INDEX contacts_org_email ON crm.contacts (org_id, email);
CREATE INDEX contacts_org_account ON crm.contacts (org_id, account_crm_id);
CREATE INDEX contacts_org_updated ON crm.contacts (org_id, updated_at DESC, id DESC);

-- Meetings as scheduling's events describe them (or, for meetings scheduling never
-- announced, as the recording bot reports them). Timelines match attendee emails to contacts
-- when read, so a contact synced after the booking still gets its meetings.
CREATE TABLE crm.meetings (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  title text NOT NULL,
  host_name text NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz NOT NULL CHECK (end_time >= start_time),
  canceled boolean NOT NULL DEFAULT false,
  preview boolean NOT NULL DEFAULT false,
  attendee_emails text[] NOT NULL DEFAULT '{}',
  -- 'scheduling' once an event described it; 'bot' while only the bot did.
  source text NOT NULL CHECK (source IN ('scheduling', 'bot')),
  -- The meeting's update time at scheduling: an older event never overwrites a newer one.
  version_time timestamptz NOT NULL,
  UNIQUE (org_id, id)
);
CREATE INDEX meetings_org_attendees ON crm.meetings USING gin (attendee_emails);

-- One row per recipient of a sent email (SEND events), by event id.
CREATE TABLE crm.email_activity (
  event_id text PRIMARY KEY,
  org_id text NOT NULL,
  recipient_email text NOT NULL CHECK (recipient_email = lower(recipient_email)),
  occurred_at timestamptz NOT NULL,
  subject text NOT NULL,
  sender_name text NOT NULL
);
CREATE INDEX email_activity_recipient ON crm.email_activity (org_id, recipient_email, occurred_at DESC);

-- One recording bot per meeting.
CREATE TABLE crm.bots (
  meeting_id text PRIMARY KEY,
  org_id text NOT NULL,
  bot_id text NOT NULL UNIQUE,
  owner_user_id text NOT NULL DEFAULT '',
  status text NOT NULL CHECK (status IN
    ('pending', 'joining', 'waiting-for-host', 'recording', 'paused', 'done', 'failed', 'cancelled')),
  started_at timestamptz,
  ended_at timestamptz CHECK (ended_at IS NULL OR started_at IS NULL OR ended_at >= started_at),
  join_url text NOT NULL DEFAULT '',
  provider text NOT NULL DEFAULT '',
  recording_available boolean NOT NULL DEFAULT false,
  error_reason text,
  updated_at timestamptz NOT NULL,
  -- The spec: errorReason is set when (and only when) the bot failed.
  CHECK ((status = 'failed') = (error_reason IS NOT NULL)),
  FOREIGN KEY (org_id, meeting_id) REFERENCES crm.meetings (org_id, id)
);

CREATE TABLE crm.transcript_chunks (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  meeting_id text NOT NULL REFERENCES crm.bots (meeting_id),
  sequence int NOT NULL CHECK (sequence >= 0),
  speaker text NOT NULL,
  host_id text,
  language text NOT NULL CHECK (language ~ '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$'),
  start_time double precision NOT NULL CHECK (start_time >= 0),
  end_time double precision NOT NULL CHECK (end_time >= start_time),
  text text NOT NULL,
  words jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(words) = 'array'),
  UNIQUE (meeting_id, sequence)
);
CREATE INDEX transcript_chunks_meeting_start ON crm.transcript_chunks (meeting_id, start_time, id);

CREATE TABLE crm.chat_messages (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  meeting_id text NOT NULL REFERENCES crm.bots (meeting_id),
  sequence int NOT NULL CHECK (sequence >= 0),
  sender text NOT NULL,
  sender_host_id text,
  sent_at timestamptz NOT NULL,
  text text NOT NULL,
  recipients text NOT NULL CHECK (recipients IN ('everyone', 'private')),
  recipient_host_id text CHECK (recipient_host_id IS NULL OR recipients = 'private'),
  UNIQUE (meeting_id, sequence)
);
CREATE INDEX chat_messages_meeting_sent ON crm.chat_messages (meeting_id, sent_at, id);
