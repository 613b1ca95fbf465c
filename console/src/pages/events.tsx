import { useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "../api.js";
import { ErrorBox, Json, localToIso, TableWrap, usePages, When } from "../components.js";
import { useSession } from "../session-context.js";
import { type TailStatus, tail } from "../sse.js";

interface LoggedEvent {
  id?: string;
  type?: string;
  timestamp?: string;
  data?: unknown;
}

const MAX_TAIL = 200;

function EventRow({ event }: { event: LoggedEvent }) {
  const [open, setOpen] = useState(false);
  const id = event.id ?? "";
  return (
    <>
      <tr data-testid="event-row" data-event-id={id}>
        <td>
          <code>{id}</code>
        </td>
        <td>{event.type}</td>
        <td>
          <When iso={event.timestamp} />
        </td>
        <td>
          <button
            type="button"
            class="secondary"
            aria-expanded={open}
            aria-controls={`payload-${id}`}
            onClick={() => setOpen(!open)}
          >
            {open ? "Hide payload" : "Payload"}
          </button>
        </td>
      </tr>
      {open ? (
        <tr id={`payload-${id}`}>
          <td colSpan={4}>
            <Json value={event} label={`Payload of ${id}`} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

function EventsTable({ events, label }: { events: LoggedEvent[]; label: string }) {
  return (
    <TableWrap label={label}>
      <table>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Type</th>
            <th scope="col">Time (UTC)</th>
            <th scope="col">
              <span class="sr-only">Payload</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <EventRow key={e.id} event={e} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function TypeSelect({ id, value, onChange }: { id: string; value: string; onChange(v: string): void }) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
      <option value="">All types</option>
      {__EVENT_CATALOG__.map((t) => (
        <option key={t} value={t}>
          {t}
        </option>
      ))}
    </select>
  );
}

function LiveTail() {
  const { creds } = useSession();
  const [running, setRunning] = useState(false);
  const [type, setType] = useState("");
  const [status, setStatus] = useState<TailStatus>("stopped");
  const [error, setError] = useState<ApiError | undefined>();
  const [events, setEvents] = useState<LoggedEvent[]>([]);
  const abort = useRef<AbortController | undefined>(undefined);

  useEffect(() => {
    if (!running) return;
    const controller = new AbortController();
    abort.current = controller;
    setError(undefined);
    tail(
      creds,
      { type: type ? [type] : undefined },
      {
        onMessage(message) {
          let event: LoggedEvent;
          try {
            event = JSON.parse(message.data) as LoggedEvent;
          } catch {
            event = { id: message.id, data: message.data };
          }
          setEvents((list) => [event, ...list].slice(0, MAX_TAIL));
        },
        onStatus(next, err) {
          setStatus(next);
          if (err) setError(err);
          else if (next === "live") setError(undefined);
          if (next === "stopped" && err) setRunning(false);
        },
      },
      controller.signal,
    );
    return () => controller.abort();
  }, [running, type, creds.key, creds.actingOn]);

  return (
    <section aria-labelledby="tail-heading">
      <h2 id="tail-heading">Live tail</h2>
      <p class="muted">
        New events as they happen (GET /events/stream); after a dropped connection it resumes from the last event
        received.
      </p>
      <div class="toolbar">
        <label for="tail-type">Type</label>
        <TypeSelect id="tail-type" value={type} onChange={setType} />
        <button type="button" onClick={() => setRunning(!running)} aria-pressed={running}>
          {running ? "Stop live tail" : "Start live tail"}
        </button>
        <span class={`status status-${status}`} role="status" data-testid="tail-status">
          {status === "live"
            ? "Live"
            : status === "stopped"
              ? "Stopped"
              : status === "connecting"
                ? "Connecting…"
                : "Reconnecting…"}
        </span>
      </div>
      <ErrorBox error={error} />
      {events.length > 0 ? (
        <EventsTable events={events} label="Live events" />
      ) : running ? (
        <p>Waiting for events…</p>
      ) : null}
    </section>
  );
}

export function EventsPage() {
  const { creds } = useSession();
  const [type, setType] = useState("");
  const [after, setAfter] = useState("");
  const [before, setBefore] = useState("");
  const {
    items: events,
    cursor,
    error,
    loading,
    load,
  } = usePages<LoggedEvent>(creds, "/events", () => ({
    type: type ? [type] : undefined,
    createdAfter: localToIso(after),
    createdBefore: localToIso(before),
  }));

  return (
    <main id="main">
      <h1>Events</h1>
      <LiveTail />
      <section aria-labelledby="log-heading">
        <h2 id="log-heading">Event log</h2>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            load(false);
          }}
        >
          <div>
            <label for="events-type">Type</label>
            <TypeSelect id="events-type" value={type} onChange={setType} />
          </div>
          <div>
            <label for="events-after">From</label>
            <input
              id="events-after"
              type="datetime-local"
              value={after}
              onInput={(e) => setAfter(e.currentTarget.value)}
            />
          </div>
          <div>
            <label for="events-before">Before</label>
            <input
              id="events-before"
              type="datetime-local"
              value={before}
              onInput={(e) => setBefore(e.currentTarget.value)}
            />
          </div>
          <button type="submit">Apply filters</button>
        </form>
        <ErrorBox error={error} />
        {events.length === 0 && !loading && !error ? <p>No events match.</p> : null}
        {events.length > 0 ? <EventsTable events={events} label="Event log" /> : null}
        {loading ? (
          <p class="muted" role="status">
            Loading…
          </p>
        ) : null}
        {cursor ? (
          <button type="button" class="secondary" onClick={() => load(true)}>
            Load more
          </button>
        ) : null}
      </section>
    </main>
  );
}
