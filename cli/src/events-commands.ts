import { type Command, CommanderError } from "commander";
import { ApiError, apiBase, apiClient } from "./api-client.js";
import { endpoints } from "./endpoints.js";
import { parseEventKinds } from "./event-kinds.js";
import { checkForwardTo, listen, newSessionSecret } from "./listen.js";
import { ListenState } from "./listen-state.js";
import { TRIGGER_SCOPES, TRIGGERS, trigger } from "./trigger.js";

export interface EventCommandsDeps {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  now(): Date;
  /** Ends `listen` (tests); SIGINT and SIGTERM do otherwise. */
  signal?: AbortSignal;
  /** Connection attempts of `listen` before it gives up, with short waits (tests). */
  connectAttempts?: number;
}

const KEY_HELP =
  "API key (env PLATFORM_API_KEY); needs webhooks:read (listen) or the scopes of the kind (trigger; see its --help)";

/** Prints an API failure as one line and exits 1, like the admin commands. */
export function fail(deps: EventCommandsDeps, err: unknown): never {
  if (!(err instanceof ApiError)) throw err;
  deps.stderr(`error: ${err.message}\n`);
  throw new CommanderError(1, "platform.api", err.message);
}

export function requireKey(deps: EventCommandsDeps, raw: string | undefined): string {
  const key = raw ?? deps.env.PLATFORM_API_KEY;
  if (!key)
    fail(
      deps,
      new ApiError("an API key is required: pass --api-key or set PLATFORM_API_KEY (see `platform sandbox keys`)"),
    );
  return key;
}

/** `platform listen` and `platform trigger`: the public API with an API key, not the admin plane. */
export function registerEventCommands(program: Command, deps: EventCommandsDeps): void {
  const { apiUrl } = endpoints(deps.env);
  const out = (line: string) => deps.stdout(`${line}\n`);
  const err = (line: string) => deps.stderr(`${line}\n`);

  program
    .command("listen")
    .description(
      "forward the organization's live events to a local URL as Standard Webhooks-signed POSTs (no public endpoint needed)",
    )
    .requiredOption("--forward-to <url>", "where each event is POSTed, e.g. http://localhost:3000/webhooks")
    .option("--events <kinds>", "comma-separated event kinds to forward (default: every kind)")
    .option("--api-key <key>", KEY_HELP)
    .option("--api-url <url>", "the API (env PLATFORM_API_URL, else PLATFORM_URL/api/v1alpha1)", apiUrl)
    .option("--last-event-id <evt_…>", "resume after this event: nothing after it is missed")
    .option("--no-resume", "start from now, not after the last event the previous run forwarded")
    .option("--secret <whsec_…>", "sign with this secret instead of the stable one kept for the API key")
    .option(
      "--json",
      "print JSON lines: first {secret, forwardTo, events, apiUrl}, then {time, id, type, status, ms, error?} per event",
    )
    .addHelpText(
      "after",
      `
Each event is POSTed with the body of its v2 webhook delivery and the headers webhook-id (the
event id), webhook-timestamp and webhook-signature, signed with the secret printed at start,
so the receiver's verification code (e.g. the standardwebhooks package) runs as in
production. One line per event: time, kind, id, the receiver's status and how long it took.

The secret is stable per API key: made on first use and kept, with the last event forwarded,
in $XDG_CONFIG_HOME/platform/listen.json (else ~/.config/platform/listen.json; mode 0600; the
key itself is not stored). A restart resumes after that event unless --no-resume.
The connection is resumed after drops (Last-Event-ID), with backoff; Ctrl-C stops. When it
never connects (a wrong address, a stopped platform) it gives up after 5 attempts.

Examples:
  $ platform listen --forward-to http://localhost:3000/webhooks --api-key $KEY
  $ platform listen --forward-to http://localhost:3000/webhooks --events scheduling.smartscheduler.booked,scheduling.smartscheduler.canceled
  $ platform listen --forward-to http://localhost:3000/webhooks --last-event-id evt_… --secret whsec_… --json`,
    )
    .action(
      async (opts: {
        forwardTo: string;
        events?: string;
        apiKey?: string;
        apiUrl: string;
        lastEventId?: string;
        resume: boolean;
        secret?: string;
        json?: boolean;
      }) => {
        const apiKey = requireKey(deps, opts.apiKey);
        let events: string[];
        let base: string;
        try {
          events = parseEventKinds(opts.events);
          checkForwardTo(opts.forwardTo);
          base = apiBase(opts.apiUrl);
        } catch (e) {
          fail(deps, e);
        }
        const state = new ListenState(deps.env);
        const secret = opts.secret ?? state.secretFor(apiKey, newSessionSecret);
        const saved = opts.resume && !opts.lastEventId ? state.lastEventId(apiKey, base) : undefined;
        const lastEventId = opts.lastEventId ?? saved;
        const controller = new AbortController();
        const stop = () => controller.abort();
        deps.signal?.addEventListener("abort", stop, { once: true });
        if (!deps.signal) {
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
        }
        try {
          await listen(
            {
              apiUrl: opts.apiUrl,
              apiKey,
              forwardTo: opts.forwardTo,
              events,
              json: opts.json === true,
              ...(lastEventId ? { lastEventId, lastEventIdSource: saved ? "saved" : "given" } : {}),
              secret,
              secretNote: opts.secret ? "from --secret" : `stable for this API key, kept in ${state.file}`,
              ...(deps.connectAttempts ? { connectAttempts: deps.connectAttempts, minBackoffMs: 10 } : {}),
            },
            {
              out,
              err,
              now: deps.now,
              forwarded: (id) => state.saveLastEventId(apiKey, base, id),
            },
            controller.signal,
          );
        } catch (e) {
          fail(deps, e);
        } finally {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
        }
      },
    );

  program
    .command("trigger")
    .description("cause a real event of a kind in the organization (sandbox data), to watch it arrive with `listen`")
    .argument("<event-type>", `one of: ${Object.keys(TRIGGERS).join(", ")}`)
    .option("--api-key <key>", KEY_HELP)
    .option("--api-url <url>", "the API (env PLATFORM_API_URL, else PLATFORM_URL/api/v1alpha1)", apiUrl)
    .option("--json", "print a JSON array of the steps {action, id, emits}")
    .addHelpText(
      "after",
      `
What each kind does (through the public API, with Idempotency-Keys):
${Object.entries(TRIGGERS)
  .map(([kind, what]) => `  ${kind.padEnd(38)} ${what}`)
  .join("\n")}

Scopes the key needs: ${TRIGGER_SCOPES}.
What a revenue kind creates (a deal named "Created by platform trigger") stays in the org.

Examples:
  $ platform trigger scheduling.smartscheduler.booked --api-key $KEY
  $ platform trigger scheduling.smartscheduler.rescheduled --json
  $ platform trigger revenue.deal.updated --api-key $KEY`,
    )
    .action(async (type: string, opts: { apiKey?: string; apiUrl: string; json?: boolean }) => {
      const apiKey = requireKey(deps, opts.apiKey);
      try {
        const steps = await trigger(apiClient(opts.apiUrl, apiKey), type, (s) => {
          if (!opts.json) out(`${s.action}: ${s.id} (emits ${s.emits})`);
        });
        if (opts.json) out(JSON.stringify(steps, null, 2));
      } catch (e) {
        fail(deps, e);
      }
    });
}
