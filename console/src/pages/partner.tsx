import { useState } from "preact/hooks";
import { call, type Page } from "../api.js";
import { ErrorBox, Loading, TableWrap, useLoad } from "../components.js";
import { useSession } from "../session-context.js";

interface Managed {
  id: string;
  name?: string;
  licenseTier?: string;
  grantedScopes?: string[];
  hasActiveIssues?: boolean;
}

export function PartnerPage() {
  const session = useSession();
  const { creds } = session;
  // The partner's own call: the list is refused on behalf of a child (400 invalid-acting-on-org).
  const list = useLoad(
    () => call<Page<Managed>>(creds, "/partner/managed-organizations", { asSelf: true, query: { limit: 100 } }),
    [creds.key],
  );
  const [orgId, setOrgId] = useState("");
  const items = list.data?.items ?? [];
  return (
    <main id="main">
      <h1>Partner</h1>
      <p>
        The organizations this key manages. Acting on one, every page of the console shows that organization, within the
        scopes it granted (X-Platform-Acting-On).
      </p>
      {list.loading ? <Loading what="managed organizations" /> : null}
      <ErrorBox error={list.error} />
      {items.length > 0 ? (
        <TableWrap label="Managed organizations">
          <table>
            <thead>
              <tr>
                <th scope="col">Organization</th>
                <th scope="col">License</th>
                <th scope="col">Granted scopes</th>
                <th scope="col">
                  <span class="sr-only">Act on</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((o) => (
                <tr key={o.id} data-testid="managed-row">
                  <td>
                    {o.name}
                    {o.hasActiveIssues ? <span class="badge badge-failing"> issues</span> : null}
                    <div class="muted small">
                      <code>{o.id}</code>
                    </div>
                  </td>
                  <td>{o.licenseTier ?? "—"}</td>
                  <td class="small">{(o.grantedScopes ?? []).join(", ")}</td>
                  <td>
                    {creds.actingOn === o.id ? (
                      <strong>Acting on it</strong>
                    ) : (
                      <button type="button" onClick={() => session.actOn(o.id, o.name)}>
                        Act on {o.name ?? o.id}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
      {!list.loading && !list.error && items.length === 0 ? <p>This key manages no organization.</p> : null}
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          if (orgId.trim()) session.actOn(orgId.trim());
        }}
      >
        <label for="act-on-id">Act on an organization by id</label>
        <input id="act-on-id" value={orgId} onInput={(e) => setOrgId(e.currentTarget.value)} placeholder="org_…" />
        <button type="submit" class="secondary">
          Act on it
        </button>
      </form>
      {creds.actingOn ? (
        <button type="button" class="secondary" onClick={() => session.actOn(undefined)}>
          Stop acting on {session.actingOnName ?? creds.actingOn}
        </button>
      ) : null}
    </main>
  );
}
