import { useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import { call } from "../api.js";
import { ErrorBox, Json, Loading, localToIso, TableWrap, useLoad, usePages, When } from "../components.js";
import { useSession } from "../session-context.js";

interface RequestLog {
  requestId: string;
  method?: string;
  route?: string;
  pathIds?: Record<string, string> | null;
  status?: number;
  problemType?: string | null;
  durationMs?: number;
  keyId?: string;
  orgId?: string;
  actingOn?: string | null;
  idempotencyKey?: string | null;
  createdAt?: string;
}

const FILTERS = ["status", "statusClass", "method", "route", "problemType", "keyId"] as const;
type Filter = (typeof FILTERS)[number];
const LABELS: Record<Filter, string> = {
  status: "Status",
  statusClass: "Status class",
  method: "Method",
  route: "Route",
  problemType: "Problem type",
  keyId: "Key id",
};

function FindById() {
  const [, navigate] = useLocation();
  const [id, setId] = useState("");
  return (
    <form
      class="toolbar"
      aria-label="Find a request by its id"
      onSubmit={(e) => {
        e.preventDefault();
        if (id.trim()) navigate(`/requests/${encodeURIComponent(id.trim())}`);
      }}
    >
      <label for="find-request">Request ID</label>
      <input
        id="find-request"
        value={id}
        onInput={(e) => setId(e.currentTarget.value)}
        placeholder="the X-Request-Id"
      />
      <button type="submit">Find request</button>
    </form>
  );
}

export function RequestsPage() {
  const { creds } = useSession();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const { items, cursor, error, loading, load } = usePages<RequestLog>(creds, "/request-logs", () => ({
    ...filters,
    from: localToIso(from),
    to: localToIso(to),
  }));

  return (
    <main id="main">
      <h1>Requests</h1>
      <FindById />
      <form
        class="filters"
        aria-label="Filter the request log"
        onSubmit={(e) => {
          e.preventDefault();
          load(false);
        }}
      >
        {FILTERS.map((f) => (
          <div key={f}>
            <label for={`filter-${f}`}>{LABELS[f]}</label>
            {f === "statusClass" ? (
              <select
                id={`filter-${f}`}
                value={filters[f] ?? ""}
                onChange={(e) => setFilters({ ...filters, [f]: e.currentTarget.value })}
              >
                <option value="">Any</option>
                {["2xx", "3xx", "4xx", "5xx"].map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : f === "method" ? (
              <select
                id={`filter-${f}`}
                value={filters[f] ?? ""}
                onChange={(e) => setFilters({ ...filters, [f]: e.currentTarget.value })}
              >
                <option value="">Any</option>
                {["GET", "POST", "PATCH", "PUT", "DELETE"].map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={`filter-${f}`}
                value={filters[f] ?? ""}
                onInput={(e) => setFilters({ ...filters, [f]: e.currentTarget.value })}
              />
            )}
          </div>
        ))}
        <div>
          <label for="filter-from">From</label>
          <input id="filter-from" type="datetime-local" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        </div>
        <div>
          <label for="filter-to">To</label>
          <input id="filter-to" type="datetime-local" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </div>
        <button type="submit">Apply filters</button>
      </form>
      <ErrorBox error={error} />
      {items.length === 0 && !loading && !error ? <p>No requests match.</p> : null}
      {items.length > 0 ? (
        <TableWrap label="Request log">
          <table>
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                <th scope="col">Request</th>
                <th scope="col">Status</th>
                <th scope="col">Duration</th>
                <th scope="col">Request ID</th>
              </tr>
            </thead>
            <tbody>
              {items.map((r) => (
                <tr key={r.requestId} data-testid="request-row">
                  <td>
                    <When iso={r.createdAt} />
                  </td>
                  <td>
                    <code>
                      {r.method} {r.route}
                    </code>
                  </td>
                  <td>
                    {r.status}
                    {r.problemType ? <div class="small muted">{r.problemType.split("/").pop()}</div> : null}
                  </td>
                  <td>{typeof r.durationMs === "number" ? `${r.durationMs} ms` : "—"}</td>
                  <td>
                    <Link href={`/requests/${encodeURIComponent(r.requestId)}`}>{r.requestId}</Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
      {loading ? <Loading what="requests" /> : null}
      {cursor ? (
        <button type="button" class="secondary" onClick={() => load(true)}>
          Load more
        </button>
      ) : null}
    </main>
  );
}

export function RequestPage({ id }: { id: string }) {
  const { creds } = useSession();
  const record = useLoad(
    () => call<RequestLog>(creds, `/request-logs/${encodeURIComponent(id)}`),
    [creds.key, creds.actingOn, id],
  );
  const r = record.data;
  return (
    <main id="main">
      <p>
        <Link href="/requests">← Requests</Link>
      </p>
      <h1>Request</h1>
      <FindById />
      {record.loading ? <Loading what="the request" /> : null}
      <ErrorBox error={record.error} />
      {r ? (
        <>
          <dl class="facts" data-testid="request-record">
            <dt>Request ID</dt>
            <dd>
              <code>{r.requestId}</code>
            </dd>
            <dt>Request</dt>
            <dd>
              <code>
                {r.method} {r.route}
              </code>
            </dd>
            <dt>Status</dt>
            <dd>{r.status}</dd>
            <dt>Problem</dt>
            <dd>{r.problemType ?? "—"}</dd>
            <dt>Duration</dt>
            <dd>{typeof r.durationMs === "number" ? `${r.durationMs} ms` : "—"}</dd>
            <dt>Key</dt>
            <dd>
              <code>{r.keyId ?? "—"}</code>
            </dd>
            <dt>Organization</dt>
            <dd>
              <code>{r.orgId ?? "—"}</code>
              {r.actingOn ? (
                <>
                  {" "}
                  acting on <code>{r.actingOn}</code>
                </>
              ) : null}
            </dd>
            <dt>Idempotency-Key</dt>
            <dd>{r.idempotencyKey ? <code>{r.idempotencyKey}</code> : "—"}</dd>
            <dt>Time</dt>
            <dd>
              <When iso={r.createdAt} />
            </dd>
          </dl>
          <details>
            <summary>Raw record</summary>
            <Json value={r} label="Request record as JSON" />
          </details>
        </>
      ) : null}
    </main>
  );
}
