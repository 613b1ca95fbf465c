-- Scheduling: Smart Schedules, their hosts, busy time and the meetings booked through them.

-- btree_gist gives text an equality operator class for GiST, which the double-booking
-- exclusion constraint below combines with the range overlap operator.
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- Hosts are identity's users as scheduling needs them (a projection: scheduling never reads
-- identity's tables) plus what only scheduling owns: the zone and the working hours.
CREATE TABLE scheduling.hosts (
  user_id text PRIMARY KEY,
  org_id text NOT NULL,
  email text NOT NULL,
  first_name text NOT NULL,
  last_name text NOT NULL,
  display_name text NOT NULL,
  time_zone text NOT NULL,
  -- [{weekday 1..7, start "HH:MM", end "HH:MM"}] in time_zone.
  working_hours jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(working_hours) = 'array'),
  UNIQUE (org_id, user_id)
);

CREATE TABLE scheduling.schedules (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  description text NOT NULL DEFAULT '',
  status text NOT NULL CHECK (status IN ('active', 'disabled', 'draft')),
  duration_minutes int NOT NULL CHECK (duration_minutes > 0),
  booking_periods int[] NOT NULL,
  step_minutes int NOT NULL CHECK (step_minutes > 0),
  time_zone text NOT NULL,
  min_advance_minutes int NOT NULL CHECK (min_advance_minutes >= 0),
  max_advance_days int NOT NULL CHECK (max_advance_days > 0),
  matching_form jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(matching_form) = 'array'),
  survey_questions jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(survey_questions) = 'array'),
  -- {rules: [{when: [{fieldKey, anyOf}], hostGroups: [[userId]]}], fallback: [[userId]]}
  routing jsonb NOT NULL,
  -- {type, provider?, address?, joinUrl?}; NULL when the schedule names no place.
  location jsonb,
  send_confirmations boolean NOT NULL DEFAULT true,
  published_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (org_id, id),
  CHECK (duration_minutes = ANY (booking_periods))
);

-- The list endpoint's sorts (drafts are never listed).
CREATE INDEX schedules_org_updated ON scheduling.schedules (org_id, updated_at, id) WHERE status <> 'draft';
CREATE INDEX schedules_org_created ON scheduling.schedules (org_id, created_at, id) WHERE status <> 'draft';
CREATE INDEX schedules_org_name ON scheduling.schedules (org_id, lower(name), id) WHERE status <> 'draft';

-- The assignees: who may be routed to. A host belongs to the schedule's organization.
CREATE TABLE scheduling.schedule_hosts (
  schedule_id text NOT NULL,
  org_id text NOT NULL,
  user_id text NOT NULL,
  PRIMARY KEY (schedule_id, user_id),
  FOREIGN KEY (org_id, schedule_id) REFERENCES scheduling.schedules (org_id, id),
  FOREIGN KEY (org_id, user_id) REFERENCES scheduling.hosts (org_id, user_id)
);

-- Time a host's external calendar reports as taken.
CREATE TABLE scheduling.busy_blocks (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES scheduling.hosts (user_id),
  start_time timestamptz NOT NULL,
  end_time timestamptz NOT NULL,
  CHECK (end_time > start_time)
);
CREATE INDEX busy_blocks_user_range ON scheduling.busy_blocks USING gist (user_id, tstzrange(start_time, end_time));

CREATE TABLE scheduling.meetings (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  schedule_id text NOT NULL,
  host_user_id text NOT NULL,
  attendee_email text NOT NULL,
  attendee_first_name text NOT NULL,
  attendee_last_name text NOT NULL,
  attendee_phone text,
  attendee_time_zone text,
  additional_attendees text[] NOT NULL DEFAULT '{}' CHECK (cardinality(additional_attendees) <= 50),
  title text NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz NOT NULL,
  time_zone text NOT NULL,
  location jsonb,
  conferencing jsonb,
  calendar_event_id text,
  -- [{key, answer}] in the matching form's field order.
  form_values jsonb NOT NULL DEFAULT '[]',
  -- [{question, answer}] in the schedule's question order.
  survey_responses jsonb NOT NULL DEFAULT '[]',
  -- {id, source, medium, campaign, term, content}; NULL when no UTM data was captured.
  campaign jsonb,
  preview boolean NOT NULL DEFAULT false,
  canceled_at timestamptz,
  cancel_reason text CHECK (char_length(cancel_reason) <= 500),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version bigint NOT NULL DEFAULT 1,
  CHECK (end_time > start_time),
  FOREIGN KEY (org_id, schedule_id) REFERENCES scheduling.schedules (org_id, id),
  FOREIGN KEY (org_id, host_user_id) REFERENCES scheduling.hosts (org_id, user_id),
  -- One meeting per host per instant: the constraint, not a read-then-insert check, decides
  -- between concurrent bookings (the loser gets 23P01, answered as slot-conflict). Its index
  -- also serves availability's look-up of a host's meetings in a range.
  CONSTRAINT meetings_no_double_booking
    EXCLUDE USING gist (host_user_id WITH =, tstzrange(start_time, end_time) WITH &&) WHERE (canceled_at IS NULL)
);

-- Every booking, reschedule and cancellation, with what it changed.
CREATE TABLE scheduling.meeting_audit (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  meeting_id text NOT NULL REFERENCES scheduling.meetings (id),
  at timestamptz NOT NULL,
  action text NOT NULL CHECK (action IN ('booked', 'rescheduled', 'canceled')),
  reason text,
  previous_start_time timestamptz,
  previous_end_time timestamptz,
  previous_host_user_id text,
  new_start_time timestamptz,
  new_end_time timestamptz,
  new_host_user_id text
);
CREATE INDEX meeting_audit_meeting ON scheduling.meeting_audit (meeting_id, id);
