import { useEffect, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { type Credentials, call, type Page } from "../api.js";
import { ErrorBox, Json, Loading, localToIso, num, str, TableWrap, useLoad, When } from "../components.js";
import { can, useSession } from "../session-context.js";

interface Subscription {
  id: string;
  endpointUrl?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
  payloadVersion?: string;
  disabledReason?: string | null;
  // Health (the delivery-operations API): absent on older platforms.
  status?: string;
  lastSuccessAt?: string | null;
  lastFailureAt?: string | null;
  recentSuccessRate?: number | null;
  secret?: string;
}

interface Delivery {
  id: string;
  eventId?: string;
  eventType?: string;
  attempt?: number;
  status?: string;
  trigger?: string;
  responseStatus?: number | null;
  durationMs?: number | null;
  error?: string | null;
  attemptedAt?: string | null;
  nextRetryAt?: string | null;
  createdAt?: string;
}

interface Recovery {
  id?: string;
  status?: string;
  since?: string;
  queued?: number;
  delivered?: number;
  failed?: number;
  createdAt?: string;
  completedAt?: string | null;
}

function health(sub: Subscription): string {
  if (sub.status) return sub.status;
  if (sub.enabled === false) return "disabled";
  return "enabled";
}

function EventsPicker({ value, onChange, legend }: { value: string[]; onChange(v: string[]): void; legend: string }) {
  return (
    <fieldset class="events-picker">
      <legend>{legend}</legend>
      {__EVENT_CATALOG__.map((t) => {
        const id = `${legend.replace(/\W+/g, "-")}-${t.replace(/\W+/g, "-")}`;
        return (
          <div key={t} class="check">
            <input
              id={id}
              type="checkbox"
              checked={value.includes(t)}
              onChange={(e) => onChange(e.currentTarget.checked ? [...value, t] : value.filter((v) => v !== t))}
            />
            <label for={id}>{t}</label>
          </div>
        );
      })}
    </fieldset>
  );
}

/** A signing secret, shown once: create and rotate-secret return it, nothing else ever does. */
function SecretOnce({ secret, onDone }: { secret: string; onDone(): void }) {
  const [shown, setShown] = useState(false);
  return (
    <div class="secret" role="alert">
      <p>
        <strong>Signing secret.</strong> It is shown only this once: store it now.
      </p>
      <p>
        <code data-testid="secret">{shown ? secret : "whsec_••••••••••••"}</code>{" "}
        <button type="button" class="secondary" onClick={() => setShown(!shown)}>
          {shown ? "Hide" : "Reveal"}
        </button>{" "}
        <button type="button" class="secondary" onClick={() => navigator.clipboard?.writeText(secret)}>
          Copy
        </button>
      </p>
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </div>
  );
}

function CreateForm({ creds, onCreated }: { creds: Credentials; onCreated(sub: Subscription): void }) {
  const [endpointUrl, setEndpointUrl] = useState("");
  const [description, setDescription] = useState("");
  const [events, setEvents] = useState<string[]>([]);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="card"
      aria-labelledby="create-heading"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          const sub = await call<Subscription>(creds, "/webhook-subscriptions", {
            method: "POST",
            idempotent: true,
            body: { endpointUrl, events, ...(description ? { description } : {}) },
          });
          setEndpointUrl("");
          setDescription("");
          setEvents([]);
          onCreated(sub);
        } catch (err) {
          setError(err);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2 id="create-heading">New subscription</h2>
      <label for="new-endpoint">Endpoint URL</label>
      <input
        id="new-endpoint"
        type="url"
        required
        placeholder="https://example.com/webhooks"
        value={endpointUrl}
        onInput={(e) => setEndpointUrl(e.currentTarget.value)}
      />
      <label for="new-description">Description</label>
      <input id="new-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <EventsPicker legend="Events to receive" value={events} onChange={setEvents} />
      <button type="submit" disabled={busy}>
        Create subscription
      </button>
      <ErrorBox error={error} />
    </form>
  );
}

export function WebhooksPage() {
  const session = useSession();
  const { creds } = session;
  const writes = can(session, "webhooks:write");
  const list = useLoad(
    () => call<Page<Subscription>>(creds, "/webhook-subscriptions", { query: { limit: 10 } }),
    [creds.key, creds.actingOn],
  );
  const [secret, setSecret] = useState<string | undefined>();
  const items = list.data?.items ?? [];
  return (
    <main id="main">
      <h1>Webhooks</h1>
      {secret ? <SecretOnce secret={secret} onDone={() => setSecret(undefined)} /> : null}
      <section aria-labelledby="subs-heading">
        <h2 id="subs-heading">Subscriptions</h2>
        {list.loading ? <Loading what="subscriptions" /> : null}
        <ErrorBox error={list.error} />
        {!list.loading && !list.error && items.length === 0 ? <p>No subscriptions yet.</p> : null}
        {items.length > 0 ? (
          <TableWrap label="Subscriptions">
            <table>
              <thead>
                <tr>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Health</th>
                  <th scope="col">Events</th>
                  <th scope="col">Last success</th>
                  <th scope="col">Last failure</th>
                </tr>
              </thead>
              <tbody>
                {items.map((s) => (
                  <tr key={s.id} data-testid="subscription-row">
                    <td>
                      <Link href={`/webhooks/${s.id}`}>{s.endpointUrl ?? s.id}</Link>
                      <div class="muted small">
                        <code>{s.id}</code>
                        {s.description ? ` · ${s.description}` : ""}
                      </div>
                    </td>
                    <td>
                      <span class={`badge badge-${health(s)}`}>{health(s)}</span>
                      {typeof s.recentSuccessRate === "number" ? (
                        <div class="small">{Math.round(s.recentSuccessRate * 100)} % recent success</div>
                      ) : null}
                    </td>
                    <td class="small">{(s.events ?? []).join(", ")}</td>
                    <td>
                      <When iso={s.lastSuccessAt} />
                    </td>
                    <td>
                      <When iso={s.lastFailureAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        ) : null}
      </section>
      {writes ? (
        <CreateForm
          creds={creds}
          onCreated={(sub) => {
            if (sub.secret) setSecret(sub.secret);
            list.reload();
          }}
        />
      ) : (
        <p class="muted" data-testid="read-only-note">
          This key cannot change subscriptions (it lacks webhooks:write).
        </p>
      )}
    </main>
  );
}

function EditForm({ creds, sub, onSaved }: { creds: Credentials; sub: Subscription; onSaved(): void }) {
  const [endpointUrl, setEndpointUrl] = useState(sub.endpointUrl ?? "");
  const [description, setDescription] = useState(sub.description ?? "");
  const [events, setEvents] = useState<string[]>(sub.events ?? []);
  const [enabled, setEnabled] = useState(sub.enabled !== false);
  const [error, setError] = useState<unknown>();
  return (
    <form
      class="card"
      aria-labelledby="edit-heading"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(undefined);
        try {
          await call(creds, `/webhook-subscriptions/${sub.id}`, {
            method: "PATCH",
            idempotent: true,
            body: { endpointUrl, events, description: description || null, enabled },
          });
          onSaved();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h2 id="edit-heading">Edit</h2>
      <label for="edit-endpoint">Endpoint URL</label>
      <input
        id="edit-endpoint"
        type="url"
        required
        value={endpointUrl}
        onInput={(e) => setEndpointUrl(e.currentTarget.value)}
      />
      <label for="edit-description">Description</label>
      <input id="edit-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <EventsPicker legend="Events" value={events} onChange={setEvents} />
      <div class="check">
        <input
          id="edit-enabled"
          type="checkbox"
          checked={enabled}
          onChange={(e) => setEnabled(e.currentTarget.checked)}
        />
        <label for="edit-enabled">Enabled</label>
      </div>
      <button type="submit">Save changes</button>
      <ErrorBox error={error} />
    </form>
  );
}

function RecoverForm({ creds, id }: { creds: Credentials; id: string }) {
  const [since, setSince] = useState("");
  const [recovery, setRecovery] = useState<Recovery | undefined>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (!recovery?.id || recovery.status !== "running") return;
    const timer = setTimeout(async () => {
      try {
        setRecovery(await call<Recovery>(creds, `/webhook-subscriptions/${id}/recoveries/${recovery.id}`));
      } catch (err) {
        setError(err);
      }
    }, 1_000);
    return () => clearTimeout(timer);
  }, [recovery, creds, id]);
  return (
    <form
      class="card"
      aria-labelledby="recover-heading"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(undefined);
        try {
          setRecovery(
            await call<Recovery>(creds, `/webhook-subscriptions/${id}/recover`, {
              method: "POST",
              idempotent: true,
              body: { since: localToIso(since) },
            }),
          );
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h2 id="recover-heading">Recover failed deliveries</h2>
      <p class="muted">Sends again every event whose delivery failed since the time given.</p>
      <label for="recover-since">Since</label>
      <input
        id="recover-since"
        type="datetime-local"
        required
        value={since}
        onInput={(e) => setSince(e.currentTarget.value)}
      />
      <button type="submit">Recover</button>
      <ErrorBox error={error} />
      {recovery ? (
        <p role="status" data-testid="recovery">
          Recovery <code>{recovery.id}</code>: {recovery.status}; queued {num(recovery.queued) ?? 0}, delivered{" "}
          {num(recovery.delivered) ?? 0}, failed {num(recovery.failed) ?? 0}
        </p>
      ) : null}
    </form>
  );
}

function TestForm({ creds, id, onSent }: { creds: Credentials; id: string; onSent(): void }) {
  const [eventType, setEventType] = useState("");
  const [sent, setSent] = useState<Delivery | undefined>();
  const [error, setError] = useState<unknown>();
  return (
    <form
      class="card"
      aria-labelledby="test-heading"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(undefined);
        try {
          const path = `/webhook-subscriptions/${id}/test`;
          setSent(
            await call<Delivery>(creds, path, {
              method: "POST",
              idempotent: true,
              ...(eventType ? { body: { eventType } } : {}),
            }),
          );
          onSent();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h2 id="test-heading">Send a test event</h2>
      <label for="test-type">Event type</label>
      <select id="test-type" value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
        <option value="">webhook.test (ping)</option>
        {__EVENT_CATALOG__.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <button type="submit">Send test event</button>
      <ErrorBox error={error} />
      {sent ? (
        <p role="status">
          Test queued as attempt <code>{sent.id}</code>.
        </p>
      ) : null}
    </form>
  );
}

/** A new attempt of the delivery's event now (same webhook-id). */
function resend(creds: Credentials, subscriptionId: string, deliveryId: string): Promise<Delivery> {
  return call<Delivery>(creds, `/webhook-subscriptions/${subscriptionId}/deliveries/${deliveryId}/resend`, {
    method: "POST",
    idempotent: true,
  });
}

function Deliveries({
  creds,
  id,
  writes,
  version,
}: {
  creds: Credentials;
  id: string;
  writes: boolean;
  version: number;
}) {
  const [status, setStatus] = useState("");
  const list = useLoad(
    () =>
      call<Page<Delivery>>(creds, `/webhook-subscriptions/${id}/deliveries`, {
        query: { status: status || undefined, limit: 50 },
      }),
    [creds.key, creds.actingOn, id, status, version],
  );
  const [actionError, setActionError] = useState<unknown>();
  const [resent, setResent] = useState<string | undefined>();
  const items = list.data?.items ?? [];
  return (
    <section aria-labelledby="attempts-heading">
      <h2 id="attempts-heading">Delivery attempts</h2>
      <div class="toolbar">
        <label for="attempt-status">Status</label>
        <select id="attempt-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">All</option>
          <option value="pending">pending</option>
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
        </select>
        <button type="button" class="secondary" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={list.error ?? actionError} />
      {resent ? (
        <p role="status" data-testid="resent">
          Resent: new attempt <code>{resent}</code>.
        </p>
      ) : null}
      {list.loading && items.length === 0 ? <Loading what="attempts" /> : null}
      {!list.loading && items.length === 0 && !list.error ? <p>No delivery attempts.</p> : null}
      {items.length > 0 ? (
        <TableWrap label="Delivery attempts">
          <table>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">Response</th>
                <th scope="col">Latency</th>
                <th scope="col">Sent</th>
                <th scope="col">Next retry</th>
                {writes ? (
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {items.map((d) => (
                <tr key={d.id} data-testid="attempt-row" data-status={d.status}>
                  <td>
                    {d.eventType}
                    <div class="muted small">
                      <code>{d.id}</code> · {d.trigger}
                    </div>
                  </td>
                  <td>{d.attempt}</td>
                  <td>
                    <span class={`badge badge-${d.status}`}>{d.status}</span>
                  </td>
                  <td>{d.responseStatus ?? (d.error ? <span class="small">{d.error}</span> : "—")}</td>
                  <td>{typeof d.durationMs === "number" ? `${d.durationMs} ms` : "—"}</td>
                  <td>
                    <When iso={d.attemptedAt} />
                  </td>
                  <td>
                    <When iso={d.nextRetryAt} />
                  </td>
                  {writes ? (
                    <td>
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Resend attempt ${d.id}`}
                        onClick={async () => {
                          setActionError(undefined);
                          try {
                            const next = await resend(creds, id, d.id);
                            setResent(str(next?.id));
                            list.reload();
                          } catch (err) {
                            setActionError(err);
                          }
                        }}
                      >
                        Resend
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </section>
  );
}

export function SubscriptionPage({ id }: { id: string }) {
  const session = useSession();
  const { creds } = session;
  const writes = can(session, "webhooks:write");
  const sub = useLoad(() => call<Subscription>(creds, `/webhook-subscriptions/${id}`), [creds.key, creds.actingOn, id]);
  const [secret, setSecret] = useState<string | undefined>();
  const [editing, setEditing] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [deleted, setDeleted] = useState(false);
  const [error, setError] = useState<unknown>();
  const [version, setVersion] = useState(0);
  const s = sub.data;
  if (deleted) {
    return (
      <main id="main">
        <h1>Subscription deleted</h1>
        <p>
          <Link href="/webhooks">Back to the subscriptions</Link>
        </p>
      </main>
    );
  }
  return (
    <main id="main">
      <p>
        <Link href="/webhooks">← Subscriptions</Link>
      </p>
      <h1>Subscription</h1>
      {sub.loading && !s ? <Loading what="the subscription" /> : null}
      <ErrorBox error={sub.error} />
      {secret ? <SecretOnce secret={secret} onDone={() => setSecret(undefined)} /> : null}
      {s ? (
        <>
          <dl class="facts">
            <dt>Endpoint</dt>
            <dd>
              <code>{s.endpointUrl}</code>
            </dd>
            <dt>Id</dt>
            <dd>
              <code>{s.id}</code>
            </dd>
            <dt>Health</dt>
            <dd>
              <span class={`badge badge-${health(s)}`} data-testid="health">
                {health(s)}
              </span>
              {s.disabledReason ? <span class="muted"> ({s.disabledReason})</span> : null}
              {typeof s.recentSuccessRate === "number"
                ? ` · ${Math.round(s.recentSuccessRate * 100)} % recent success`
                : ""}
            </dd>
            <dt>Last success</dt>
            <dd>
              <When iso={s.lastSuccessAt} />
            </dd>
            <dt>Last failure</dt>
            <dd>
              <When iso={s.lastFailureAt} />
            </dd>
            <dt>Events</dt>
            <dd>{(s.events ?? []).join(", ")}</dd>
            <dt>Payload</dt>
            <dd>{s.payloadVersion}</dd>
          </dl>
          {writes ? (
            <div class="toolbar" data-testid="write-actions">
              <button type="button" class="secondary" onClick={() => setEditing(!editing)} aria-expanded={editing}>
                Edit
              </button>
              <button
                type="button"
                class="secondary"
                onClick={async () => {
                  setError(undefined);
                  try {
                    const rotated = await call<Subscription>(creds, `/webhook-subscriptions/${id}/rotate-secret`, {
                      method: "POST",
                      idempotent: true,
                    });
                    setSecret(rotated.secret);
                    sub.reload();
                  } catch (err) {
                    setError(err);
                  }
                }}
              >
                Rotate secret
              </button>
              {confirmDelete ? (
                <>
                  <button
                    type="button"
                    class="danger"
                    onClick={async () => {
                      setError(undefined);
                      try {
                        await call(creds, `/webhook-subscriptions/${id}`, { method: "DELETE" });
                        setDeleted(true);
                      } catch (err) {
                        setError(err);
                      }
                    }}
                  >
                    Delete for good
                  </button>
                  <button type="button" class="secondary" onClick={() => setConfirmDelete(false)}>
                    Keep it
                  </button>
                </>
              ) : (
                <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>
                  Delete
                </button>
              )}
            </div>
          ) : null}
          <ErrorBox error={error} />
          {writes && editing ? (
            <EditForm
              creds={creds}
              sub={s}
              onSaved={() => {
                setEditing(false);
                sub.reload();
              }}
            />
          ) : null}
          <Deliveries creds={creds} id={id} writes={writes} version={version} />
          {writes ? (
            <div class="grid2">
              <TestForm creds={creds} id={id} onSent={() => setVersion((v) => v + 1)} />
              <RecoverForm creds={creds} id={id} />
            </div>
          ) : null}
          <details>
            <summary>Raw subscription</summary>
            <Json value={s} label="Subscription as JSON" />
          </details>
        </>
      ) : null}
    </main>
  );
}
