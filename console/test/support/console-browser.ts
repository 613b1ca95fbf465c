import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { type EmbeddedProcess, startEmbedded, stopEmbedded } from "../../../runtime/test/support/embedded-process.js";
import { buildConsole, consoleStaleReason } from "../../../scripts/build-console.js";

// What the console's browser tests and `npm run console:screenshots` share: the embedded
// platform on ports of its own with a fresh data directory, Debian's chromium driven by
// playwright-core (no browser download), a local webhook receiver, and API calls with a key.

const ROOT = resolve(import.meta.dirname, "../../..");
export const SEED = "console-test";

/** Debian's chromium (scripts/chromium.sh installs it when missing). */
export function chromiumPath(): string {
  return execFileSync("bash", [join(ROOT, "scripts/chromium.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
}

export async function launchBrowser(): Promise<Browser> {
  // --no-sandbox: CI containers run as root, where chromium's sandbox cannot start.
  return chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}

export interface ConsolePlatform {
  platform: EmbeddedProcess;
  origin: string;
  key(name: string): string;
  close(): Promise<void>;
}

/** The embedded runtime (built console served prebuilt), on a port of TEST_PORT_BASE's window. */
export async function startConsolePlatform(port?: number): Promise<ConsolePlatform> {
  if (consoleStaleReason() !== undefined) await buildConsole();
  const chosen = port ?? (Number(process.env.TEST_PORT_BASE) || 20_000) + 2600 + Math.floor(Math.random() * 100) * 10;
  const dataDir = mkdtempSync(join(tmpdir(), "console-test-"));
  const platform = await startEmbedded({
    dataDir,
    port: chosen,
    env: {
      SANDBOX_SEED: SEED,
      // The tests' receiver listens on 127.0.0.1 over plain http.
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
      WEBHOOKS_POLL_MS: "50",
      EVENTS_STREAM_POLL_MS: "50",
      ACCESS_LOG: "false",
    },
  });
  return {
    platform,
    origin: `http://127.0.0.1:${chosen}`,
    key: (name) => platform.key(name),
    async close() {
      await stopEmbedded(platform);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { items?: Record<string, unknown>[] };
}

/** One call of the public API with `key`, as an integrator's code makes it. */
export async function api(
  origin: string,
  key: string,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiAnswer> {
  const res = await fetch(`${origin}/api/v1alpha1${path}`, {
    method,
    headers: {
      "X-Platform-Api-Key": key,
      ...(opts.body !== undefined ? { "Content-Type": "application/json" } : {}),
      ...(method !== "GET" && method !== "DELETE" ? { "Idempotency-Key": crypto.randomUUID() } : {}),
      ...opts.headers,
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : {} };
}

/** Books the intro schedule's first free slot through the API; the meeting's id. */
export async function bookMeeting(origin: string, key: string): Promise<string> {
  const list = await api(origin, key, "GET", "/smart-schedules?name=intro");
  const id = list.body.items?.[0]?.id as string;
  const detail = await api(origin, key, "GET", `/smart-schedules/${id}`);
  const form = detail.body.matchingForm as { fields: { key: string; options: string[] }[] };
  const region = form.fields.find((f) => f.key === "region");
  const formValues = { region: region?.options[0] };
  const avail = await api(origin, key, "POST", `/smart-schedules/${id}/availability`, { body: { formValues } });
  if (avail.status !== 200) throw new Error(`availability: ${avail.status} ${JSON.stringify(avail.body)}`);
  const groups = avail.body.hostGroups as { slots: { slotToken: string }[] }[][];
  const slot = groups.flatMap((g) => g.flatMap((h) => h.slots))[0];
  if (!slot) throw new Error("no free slot to book");
  const booked = await api(origin, key, "POST", "/scheduled-meetings", {
    body: {
      slotToken: slot.slotToken,
      attendee: { firstName: "Grace", lastName: "Hopper", email: "grace@example.com" },
      formValues,
      surveyResponses: { "What would you like to discuss?": "The console" },
    },
  });
  if (booked.status !== 201) throw new Error(`booking: ${booked.status} ${JSON.stringify(booked.body)}`);
  return booked.body.id as string;
}

/** A webhook endpoint on 127.0.0.1 that answers `answer` (500 until told otherwise) and counts POSTs. */
export async function startReceiver(): Promise<{
  url: string;
  received: { status: number; body: string }[];
  answer: number;
  close(): Promise<void>;
}> {
  const state = {
    url: "",
    received: [] as { status: number; body: string }[],
    answer: 500,
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => {
      body += d.toString();
    });
    req.on("end", () => {
      state.received.push({ status: state.answer, body });
      res.writeHead(state.answer).end(state.answer < 300 ? "ok" : "failing");
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  state.close = () =>
    new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return state;
}

/** Signs in through the sign-in form and waits for the overview. */
export async function signIn(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/console`);
  // Signed in already in this tab (the key is in its sessionStorage): sign out first.
  const signOut = page.getByRole("button", { name: "Sign out" });
  await page.locator("#api-key").or(signOut).first().waitFor();
  if (await signOut.isVisible()) await signOut.click();
  await page.locator("#api-key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}

/** Polls `check` until it returns a value (not undefined), or fails after `ms`. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
