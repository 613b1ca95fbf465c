import { render } from "preact";
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { Link, Route, Router, Switch, useLocation } from "wouter-preact";
import { ApiError, type Credentials, call } from "./api.js";
import { ErrorBox } from "./components.js";
import { EventsPage } from "./pages/events.js";
import { OverviewPage } from "./pages/overview.js";
import { PartnerPage } from "./pages/partner.js";
import { RequestPage, RequestsPage } from "./pages/requests.js";
import { SubscriptionPage, WebhooksPage } from "./pages/webhooks.js";
import { forget, storeActingOn, storedActingOn, storedKey, storeKey } from "./session.js";
import { type KeyInfo, type Session, SessionContext, useSession } from "./session-context.js";

const BASE = "/console";

function SignIn({ error, onKey }: { error: unknown; onKey(key: string): void }) {
  const [key, setKey] = useState("");
  return (
    <main id="main" class="signin">
      <h1>Developer console</h1>
      <p>
        Sign in with an API key. The key stays in this tab only (sessionStorage): it is sent to the API in the{" "}
        <code>X-Platform-Api-Key</code> header and forgotten when the tab closes.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) onKey(key.trim());
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          required
        />
        <button type="submit">Sign in</button>
      </form>
      <ErrorBox error={error} />
      <p class="muted">
        On a local platform, <code>npx platform sandbox keys</code> prints the sandbox keys.
      </p>
    </main>
  );
}

function Nav() {
  const session = useSession();
  const [location] = useLocation();
  const items: [string, string][] = [
    ["/", "Overview"],
    ["/events", "Events"],
    ["/webhooks", "Webhooks"],
    ["/requests", "Requests"],
    ...(session.key.partner ? ([["/partner", "Partner"]] as [string, string][]) : []),
  ];
  return (
    <nav aria-label="Console">
      <ul>
        {items.map(([href, label]) => {
          const current = href === "/" ? location === "/" : location.startsWith(href);
          return (
            <li key={href}>
              <Link href={href} aria-current={current ? "page" : undefined}>
                {label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** A partner key's switch between its own organization and the ones it manages. */
function ActingOnSwitch() {
  const session = useSession();
  const [orgs, setOrgs] = useState<{ id: string; name?: string }[]>([]);
  useEffect(() => {
    call<{ items?: { id: string; name?: string }[] }>(session.creds, "/partner/managed-organizations", {
      asSelf: true,
      query: { limit: 100 },
    }).then(
      (page) => setOrgs(page.items ?? []),
      // The Partner page shows why the list failed; the switch just offers nothing.
      () => setOrgs([]),
    );
  }, [session.creds.key]);
  const current = session.creds.actingOn ?? "";
  return (
    <div class="switch">
      <label for="acting-on-switch">Organization</label>
      <select
        id="acting-on-switch"
        value={current}
        onChange={(e) => {
          const id = e.currentTarget.value;
          session.actOn(id || undefined, orgs.find((o) => o.id === id)?.name);
        }}
      >
        <option value="">Own organization</option>
        {current && !orgs.some((o) => o.id === current) ? <option value={current}>{current}</option> : null}
        {orgs.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name ?? o.id}
          </option>
        ))}
      </select>
    </div>
  );
}

function Header() {
  const session = useSession();
  return (
    <header class="top">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <div class="brand">
        <span class="logo" aria-hidden="true">
          ◆
        </span>{" "}
        Platform console
      </div>
      <Nav />
      <div class="who">
        {session.key.partner ? <ActingOnSwitch /> : null}
        <span class="muted">Key</span> <code>{session.key.keyId ?? "?"}</code>
        <button type="button" class="secondary" onClick={session.signOut}>
          Sign out
        </button>
      </div>
      {session.creds.actingOn ? (
        <div class="acting" role="status" data-testid="acting-on">
          Acting on <strong>{session.actingOnName ?? session.creds.actingOn}</strong> (
          <code>{session.creds.actingOn}</code>)
          <button type="button" class="secondary" onClick={() => session.actOn(undefined)}>
            Stop acting
          </button>
        </div>
      ) : null}
    </header>
  );
}

function NotFound() {
  return (
    <main id="main">
      <h1>Not found</h1>
      <p>
        The console has no such page. <Link href="/">Back to the overview</Link>.
      </p>
    </main>
  );
}

function SignedIn() {
  return (
    <>
      <Header />
      <Switch>
        <Route path="/" component={OverviewPage} />
        <Route path="/events" component={EventsPage} />
        <Route path="/webhooks" component={WebhooksPage} />
        <Route path="/webhooks/:subscriptionId">{(p) => <SubscriptionPage id={p.subscriptionId} />}</Route>
        <Route path="/requests" component={RequestsPage} />
        <Route path="/requests/:requestId">{(p) => <RequestPage id={p.requestId} />}</Route>
        <Route path="/partner" component={PartnerPage} />
        <Route component={NotFound} />
      </Switch>
    </>
  );
}

function App() {
  const [key, setKey] = useState<string | undefined>(storedKey());
  const [actingOn, setActingOn] = useState<string | undefined>(storedActingOn());
  const [actingOnName, setActingOnName] = useState<string | undefined>();
  const [info, setInfo] = useState<KeyInfo | undefined>();
  const [scopes, setScopes] = useState<readonly string[]>([]);
  const [error, setError] = useState<unknown>();

  const signOut = useCallback(() => {
    forget();
    setKey(undefined);
    setInfo(undefined);
    setActingOn(undefined);
    setError(undefined);
  }, []);

  // The key's own view first; then, when acting on a child, the scopes the child granted.
  useEffect(() => {
    if (!key) return;
    let live = true;
    (async () => {
      const own = await call<KeyInfo>({ key }, "/api-keys/current");
      let effective = own.effectiveScopes ?? own.scopes ?? [];
      if (actingOn) {
        try {
          const child = await call<KeyInfo>({ key, actingOn }, "/api-keys/current");
          effective = child.effectiveScopes ?? [];
        } catch (err) {
          if (!live) return;
          // The child cannot be acted on (any more): back to the key's own org, saying why.
          storeActingOn(undefined);
          setActingOn(undefined);
          setError(err);
          return;
        }
      }
      if (!live) return;
      storeKey(key);
      setInfo(own);
      setScopes(effective);
    })().catch((err: unknown) => {
      if (!live) return;
      if (err instanceof ApiError && err.status === 401) forget();
      setKey(undefined);
      setInfo(undefined);
      setError(err);
    });
    return () => {
      live = false;
    };
  }, [key, actingOn]);

  const session = useMemo<Session | undefined>(() => {
    if (!key || !info) return undefined;
    const creds: Credentials = { key, actingOn };
    return {
      creds,
      key: info,
      scopes,
      actingOnName,
      async actOn(orgId, name) {
        setError(undefined);
        storeActingOn(orgId);
        setActingOnName(orgId ? name : undefined);
        setActingOn(orgId);
      },
      signOut,
    };
  }, [key, info, actingOn, actingOnName, scopes, signOut]);

  if (!session) {
    if (key && !error) {
      return (
        <main id="main">
          <p role="status">Checking the key…</p>
        </main>
      );
    }
    return (
      <SignIn
        error={error}
        onKey={(k) => {
          setError(undefined);
          setKey(k);
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={session}>
      {error ? (
        <div class="banner">
          <ErrorBox error={error} />
        </div>
      ) : null}
      <SignedIn />
    </SessionContext.Provider>
  );
}

const root = document.getElementById("app");
if (root) {
  render(
    <Router base={BASE}>
      <App />
    </Router>,
    root,
  );
}
