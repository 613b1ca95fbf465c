import { useEffect, useState } from "preact/hooks";
import { call, onRateLimit, type RateLimitState } from "../api.js";
import { ErrorBox, Loading, str, TableWrap, useLoad, When } from "../components.js";
import { can, useSession } from "../session-context.js";

interface Organization {
  id?: string;
  name?: string;
  primaryEmailDomain?: string;
  licenseTier?: string;
  seats?: { total?: number; used?: number };
}

function RateLimits() {
  const [state, setState] = useState<Record<string, RateLimitState>>({});
  useEffect(() => onRateLimit(setState), []);
  const tiers = Object.values(state);
  return (
    <section aria-labelledby="rate-heading">
      <h2 id="rate-heading">Rate limits</h2>
      <p class="muted">From the RateLimit and RateLimit-Policy headers of this console's latest responses.</p>
      {tiers.length === 0 ? (
        <p>No counted response yet.</p>
      ) : (
        <TableWrap label="Rate limits">
          <table>
            <thead>
              <tr>
                <th scope="col">Tier</th>
                <th scope="col">Remaining</th>
                <th scope="col">Limit</th>
                <th scope="col">Grows again in</th>
              </tr>
            </thead>
            <tbody>
              {tiers.map((t) => (
                <tr key={t.tier} data-testid={`rate-${t.tier}`}>
                  <td>{t.tier}</td>
                  <td>{t.remaining}</td>
                  <td>{t.limit !== undefined ? `${t.limit} per ${t.windowSeconds ?? "?"} s` : "—"}</td>
                  <td>{t.resetSeconds !== undefined ? `${t.resetSeconds} s` : "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

export function OverviewPage() {
  const session = useSession();
  const { creds, key } = session;
  const readsOrg = can(session, "organizations:read");
  const org = useLoad(
    () => (readsOrg ? call<Organization>(creds, "/organizations/me") : Promise.resolve(undefined)),
    [creds.key, creds.actingOn, readsOrg],
  );
  const scopes = key.scopes ?? [];
  return (
    <main id="main">
      <h1>Overview</h1>
      <section aria-labelledby="org-heading">
        <h2 id="org-heading">Organization</h2>
        {org.loading ? <Loading what="the organization" /> : null}
        <ErrorBox error={org.error} />
        <dl class="facts">
          <dt>Name</dt>
          <dd data-testid="org-name">{str(org.data?.name) ?? <span class="muted">(needs organizations:read)</span>}</dd>
          <dt>Id</dt>
          <dd>
            <code>{org.data?.id ?? creds.actingOn ?? key.orgId}</code>
          </dd>
          {org.data?.licenseTier ? (
            <>
              <dt>License</dt>
              <dd>{org.data.licenseTier}</dd>
            </>
          ) : null}
          {creds.actingOn ? (
            <>
              <dt>Acted on by</dt>
              <dd>
                <code>{key.orgId}</code> (partner)
              </dd>
            </>
          ) : null}
        </dl>
      </section>
      <section aria-labelledby="key-heading">
        <h2 id="key-heading">API key</h2>
        <dl class="facts">
          <dt>Key id</dt>
          <dd>
            <code>{key.keyId}</code>
          </dd>
          <dt>Expires</dt>
          <dd data-testid="key-expires">{key.expiresAt ? <When iso={key.expiresAt} /> : "never"}</dd>
          <dt>Partner</dt>
          <dd>{key.partner ? "yes: may act on the organizations it manages" : "no"}</dd>
        </dl>
        <h3>Scopes</h3>
        {scopes.length === 0 ? (
          <p>This key has no scopes: it can call nothing but this overview.</p>
        ) : (
          <ul class="chips" data-testid="scopes">
            {scopes.map((s) => (
              <li key={s}>
                <code>{s}</code>
                {creds.actingOn && !session.scopes.includes(s) ? (
                  <span class="muted"> (not granted by the child)</span>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </section>
      <RateLimits />
    </main>
  );
}
