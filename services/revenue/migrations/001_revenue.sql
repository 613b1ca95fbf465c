-- Revenue: deal schemas, deals, Q&A items, the 8P insight records, and the meetings
-- projected from scheduling's events (for deal links and meeting references).

CREATE TABLE revenue.deal_schemas (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  is_default boolean NOT NULL DEFAULT false,
  version int NOT NULL DEFAULT 1 CHECK (version >= 1),
  -- [{name, outcome: open|won|lost}] in pipeline order.
  stages jsonb NOT NULL CHECK (jsonb_typeof(stages) = 'array'),
  -- [{key, label, type, options}]
  custom_fields jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(custom_fields) = 'array'),
  -- {profile: [{key, label, type, options}], …} for the eight types.
  insight_fields jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(insight_fields) = 'object'),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (org_id, id)
);

-- One default schema per org.
CREATE UNIQUE INDEX deal_schemas_one_default ON revenue.deal_schemas (org_id) WHERE is_default;

CREATE TABLE revenue.deals (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 500),
  stage text NOT NULL,
  -- Whether the stage is open, won or lost, as the schema said when the stage was set.
  outcome text NOT NULL CHECK (outcome IN ('open', 'won', 'lost')),
  amount_value numeric CHECK (amount_value >= 0),
  amount_currency text CHECK (amount_currency ~ '^[A-Z]{3}$'),
  close_date date,
  account_id text NOT NULL,
  account_name text NOT NULL,
  owner_user_id text NOT NULL,
  owner_display_name text NOT NULL,
  primary_contact_id text,
  primary_contact_name text,
  schema_id text NOT NULL,
  schema_version int NOT NULL CHECK (schema_version >= 1),
  custom_fields jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(custom_fields) = 'object'),
  crm_source_id text,
  crm_source_url text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- A value never goes without its currency.
  CHECK (amount_value IS NULL OR amount_currency IS NOT NULL),
  CHECK ((primary_contact_id IS NULL) = (primary_contact_name IS NULL)),
  CHECK (crm_source_url IS NULL OR crm_source_id IS NOT NULL),
  FOREIGN KEY (org_id, schema_id) REFERENCES revenue.deal_schemas (org_id, id),
  UNIQUE (org_id, id)
);

-- The duplicate-sync guard: one deal per CRM record in an org, even under concurrent creates.
CREATE UNIQUE INDEX deals_crm_source ON revenue.deals (org_id, crm_source_id) WHERE crm_source_id IS NOT NULL;
CREATE INDEX deals_org_updated ON revenue.deals (org_id, updated_at DESC, id DESC);
CREATE INDEX deals_org_account ON revenue.deals (org_id, account_id);

CREATE TABLE revenue.qnas (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  deal_id text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('discovery', 'rfi')),
  state text NOT NULL CHECK (state IN ('open', 'answered', 'dismissed')),
  question_text text NOT NULL CHECK (char_length(question_text) BETWEEN 1 AND 5000),
  answer_text text,
  -- {type, meetingId?, chunkId?, documentId?, confidence} of the last answer.
  answer jsonb,
  importance text NOT NULL CHECK (importance IN ('low', 'medium', 'high')),
  linked_schema_type text,
  linked_field_key text,
  contact_id text,
  contact_name text,
  -- [{meetingId, occurredAt, source}] oldest first.
  occurrences jsonb NOT NULL CHECK (jsonb_typeof(occurrences) = 'array' AND jsonb_array_length(occurrences) >= 1),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- The shape rules: discovery links an 8P field, rfi names a contact, never the other way.
  CHECK ((direction = 'discovery') = (linked_schema_type IS NOT NULL AND linked_field_key IS NOT NULL)),
  CHECK ((direction = 'rfi') = (contact_id IS NOT NULL AND contact_name IS NOT NULL)),
  FOREIGN KEY (org_id, deal_id) REFERENCES revenue.deals (org_id, id)
);

CREATE INDEX qnas_deal ON revenue.qnas (deal_id, direction, state, updated_at DESC, id DESC);

CREATE TABLE revenue.insight_records (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  deal_id text NOT NULL,
  schema_type text NOT NULL
    CHECK (schema_type IN ('profile', 'problem', 'pain', 'power', 'position', 'phases', 'process', 'plan')),
  schema_id text NOT NULL,
  schema_version int NOT NULL,
  -- field key -> [InsightItem JSON] oldest first; only ever appended to.
  fields jsonb NOT NULL CHECK (jsonb_typeof(fields) = 'object'),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- At most one record of each type per deal: concurrent creates meet here.
  UNIQUE (deal_id, schema_type),
  FOREIGN KEY (org_id, deal_id) REFERENCES revenue.deals (org_id, id),
  FOREIGN KEY (org_id, schema_id) REFERENCES revenue.deal_schemas (org_id, id)
);

-- Meetings as scheduling's events describe them; links to deals are resolved at read time
-- from the attendee emails, so the order of meeting and contact arrival does not matter.
CREATE TABLE revenue.meetings (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  title text NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz NOT NULL,
  canceled boolean NOT NULL DEFAULT false,
  -- Lower-case emails of the attendee and the additional attendees.
  attendee_emails text[] NOT NULL,
  -- Time of the event this row reflects: an older event never overwrites a newer one.
  event_time timestamptz NOT NULL
);

CREATE INDEX meetings_org_start ON revenue.meetings (org_id, start_time DESC, id DESC);
CREATE INDEX meetings_attendees ON revenue.meetings USING gin (attendee_emails);
