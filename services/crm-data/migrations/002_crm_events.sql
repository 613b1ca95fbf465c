-- crm-data publishes account and contact changes (topic platform.crm.v1) so that other
-- contexts keep projections of them instead of asking on every write. The ingest path
-- writes one outbox row per created or changed record from now on; this backfill announces
-- the records synced before, once, so a consumer starting from the beginning sees them all.
INSERT INTO crm.outbox (id, topic, key, type, source, subject, time, data)
SELECT gen_random_uuid(), 'platform.crm.v1', a.org_id, 'platform.crm.v1.AccountChanged', 'crm-data', a.id,
  a.updated_at, jsonb_build_object('accountId', a.id, 'orgId', a.org_id, 'name', a.name)
FROM crm.accounts a
ORDER BY a.updated_at, a.id;

INSERT INTO crm.outbox (id, topic, key, type, source, subject, time, data)
SELECT gen_random_uuid(), 'platform.crm.v1', c.org_id, 'platform.crm.v1.ContactChanged', 'crm-data', c.id,
  c.updated_at, jsonb_build_object(
    'contactId', c.id,
    'orgId', c.org_id,
    'accountId', COALESCE(ca.id, ''),
    'displayName', concat_ws(' ', CASE WHEN trim(c.first_name) <> '' THEN c.first_name END,
      CASE WHEN trim(c.last_name) <> '' THEN c.last_name END),
    'email', c.email)
FROM crm.contacts c
LEFT JOIN crm.accounts ca ON ca.org_id = c.org_id AND ca.crm_id = c.account_crm_id
ORDER BY c.updated_at, c.id;
