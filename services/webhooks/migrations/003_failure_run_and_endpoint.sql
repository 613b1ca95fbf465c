-- A failure run is continuous: last_failure_at is the run's latest failure, and a failure
-- long after it (no attempt was due in between) starts a new run instead of extending an old
-- one. Both columns are NULL after a success.
ALTER TABLE webhooks.subscriptions ADD COLUMN last_failure_at timestamptz;
UPDATE webhooks.subscriptions s
   SET last_failure_at = COALESCE(
         (SELECT max(a.attempted_at) FROM webhooks.attempts a WHERE a.subscription_id = s.id AND a.status = 'failed'),
         s.failing_since)
 WHERE s.failing_since IS NOT NULL;
ALTER TABLE webhooks.subscriptions
  ADD CONSTRAINT subscriptions_failure_run CHECK ((failing_since IS NULL) = (last_failure_at IS NULL));

-- The endpoint a subscription delivers to, scheme://host:port (lower case, port explicit):
-- the delivery caps attempts in flight per endpoint, so subscriptions sharing a receiver share
-- its cap. The service writes it from endpoint_url (domain/endpoint.ts endpointOrigin); rows
-- from before this migration get the same form from the URL's authority here.
ALTER TABLE webhooks.subscriptions ADD COLUMN endpoint_origin text;
WITH parts AS (
  SELECT id,
         lower(substring(endpoint_url from '^([A-Za-z][A-Za-z0-9+.-]*):')) AS scheme,
         lower(substring(endpoint_url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)')) AS authority
    FROM webhooks.subscriptions
), split AS (
  SELECT id, scheme,
         CASE WHEN authority LIKE '[%' THEN substring(authority from '^(\[[^\]]*\])')
              ELSE rtrim(substring(authority from '^([^:]*)'), '.') END AS host,
         CASE WHEN authority LIKE '[%' THEN substring(authority from '^\[[^\]]*\]:([0-9]+)$')
              ELSE substring(authority from ':([0-9]+)$') END AS port
    FROM parts
)
UPDATE webhooks.subscriptions s
   SET endpoint_origin = split.scheme || '://' || split.host || ':' ||
         COALESCE(NULLIF(split.port, '')::int::text, CASE split.scheme WHEN 'https' THEN '443' WHEN 'http' THEN '80' ELSE '' END)
  FROM split
 WHERE split.id = s.id;
ALTER TABLE webhooks.subscriptions ALTER COLUMN endpoint_origin SET NOT NULL;
