import { AxeBuilder } from "@axe-core/playwright";
import { sandboxOrgId } from "@platform/sandbox";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  api,
  bookMeeting,
  type ConsolePlatform,
  launchBrowser,
  SEED,
  signIn,
  startConsolePlatform,
  startReceiver,
  until,
} from "./support/console-browser.js";

// The developer console in a real browser (Debian's chromium through playwright-core) against
// the embedded runtime on ports of its own: the cases, the security headers, and an
// axe-core check of every page at 375 px and 1,440 px.

let env: ConsolePlatform;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  [env, browser] = await Promise.all([startConsolePlatform(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

async function freshPage(width = 1280): Promise<Page> {
  await context?.close();
  context = await browser.newContext({ viewport: { width, height: 900 } });
  page = await context.newPage();
  return page;
}

/** Every request the page made went to the platform's own origin (no CDN, nothing outside). */
function trackRequests(p: Page): string[] {
  const urls: string[] = [];
  p.on("request", (r) => urls.push(r.url()));
  return urls;
}

const main = () => page.locator("main");
/** expect.poll's patience: as long as a locator's wait (its default is one second). */
const POLL = { timeout: 30_000 };

describe("the developer console", () => {
  it("is served with a strict CSP, X-Frame-Options DENY, no-referrer, and hashed immutable assets", async () => {
    const res = await fetch(`${env.origin}/console/webhooks`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style/);
    const script = html.match(/src="(\/console\/assets\/main-[A-Z0-9]+\.js)"/)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${env.origin}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const missing = await fetch(`${env.origin}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("signs in with a sandbox key, kept in sessionStorage only, and shows the org, scopes, expiry and rate limit", async () => {
    await freshPage();
    const requests = trackRequests(page);
    const key = env.key("acme-full");
    await signIn(page, env.origin, key);
    await expect.poll(() => page.getByTestId("org-name").textContent(), POLL).toBe("Acme Corp");
    expect(await page.getByTestId("scopes").textContent()).toContain("webhooks:write");
    expect(await page.getByTestId("key-expires").textContent()).toBe("never");
    await page.getByTestId("rate-read").waitFor();
    expect(await page.getByTestId("rate-read").textContent()).toContain("300 per 60 s");
    // The key: in sessionStorage, never in the URL, a cookie or localStorage.
    expect(await page.evaluate("Object.values(sessionStorage)")).toContain(key);
    expect(await page.evaluate("Object.values(localStorage)")).not.toContain(key);
    expect((await context.cookies()).length).toBe(0);
    expect(page.url()).not.toContain(key);
    expect(requests.every((u) => u.startsWith(env.origin))).toBe(true);
    expect(requests.some((u) => u.includes(key))).toBe(false);
    // Signing out forgets it.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("#api-key").waitFor();
    expect(await page.evaluate("Object.values(sessionStorage)")).not.toContain(key);
  });

  it("shows a booking made through the API arriving in the live tail, with its payload as formatted JSON", async () => {
    await freshPage();
    await signIn(page, env.origin, env.key("acme-full"));
    await page.getByRole("link", { name: "Events" }).click();
    await page.getByRole("button", { name: "Start live tail" }).click();
    await expect.poll(() => page.getByTestId("tail-status").textContent(), POLL).toBe("Live");
    const meetingId = await bookMeeting(env.origin, env.key("acme-full"));
    const live = page.getByRole("region", { name: "Live events" });
    const row = live.getByTestId("event-row").filter({ hasText: "scheduling.smartscheduler.booked" }).first();
    await row.waitFor({ timeout: 30_000 });
    await row.getByRole("button", { name: "Payload" }).click();
    const payload = await live.locator("pre.json").first().textContent();
    expect(payload).toContain(`"id": "${meetingId}"`);
    expect(payload).toMatch(/\n {2}"type": "scheduling\.smartscheduler\.booked"/);
  });

  it("shows a failing subscription's attempts and resends one to the receiver, which now answers", async () => {
    const key = env.key("acme-full");
    const receiver = await startReceiver();
    try {
      const created = await api(env.origin, key, "POST", "/webhook-subscriptions", {
        body: { endpointUrl: receiver.url, events: ["scheduling.smartscheduler.booked"], description: "failing" },
      });
      expect(created.status).toBe(201);
      const subId = created.body.id as string;
      expect((await api(env.origin, key, "POST", `/webhook-subscriptions/${subId}/test`)).status).toBe(202);
      await until("the failed test attempt", async () => {
        const list = await api(env.origin, key, "GET", `/webhook-subscriptions/${subId}/deliveries`);
        return list.body.items?.find((d) => d.status === "failed") ? true : undefined;
      });

      await freshPage();
      await signIn(page, env.origin, key);
      await page.getByRole("link", { name: "Webhooks" }).click();
      await page.getByRole("link", { name: receiver.url }).click();
      await page.getByRole("heading", { level: 1, name: "Subscription" }).waitFor();
      const failed = page.locator('[data-testid="attempt-row"][data-status="failed"]').first();
      await failed.waitFor();
      expect(await failed.textContent()).toContain("500");

      receiver.answer = 200;
      await failed.getByRole("button", { name: /^Resend attempt/ }).click();
      await page.getByTestId("resent").waitFor();
      await until("the resent attempt to succeed", async () => {
        await page.getByRole("button", { name: "Refresh" }).click();
        return (await page.locator('[data-testid="attempt-row"][data-status="succeeded"]').count()) > 0
          ? true
          : undefined;
      });
      expect(receiver.received.some((r) => r.status === 200)).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it("finds a request by its requestId in the request log", async () => {
    const key = env.key("acme-full");
    const made = await api(env.origin, key, "GET", "/organizations/me");
    const requestId = made.headers.get("x-request-id") ?? "";
    expect(requestId).toMatch(/^req_/);
    await freshPage();
    await signIn(page, env.origin, key);
    await page.getByRole("link", { name: "Requests" }).click();
    await page.getByRole("heading", { level: 1, name: "Requests" }).waitFor();
    await page.getByLabel("Request ID").fill(requestId);
    await page.getByRole("button", { name: "Find request" }).click();
    const record = page.getByTestId("request-record");
    await until("the request's record", async () => {
      if (await record.isVisible()) return true;
      // The log is written after the answer: look again until it is there.
      if (await main().getByRole("alert").isVisible()) await page.reload();
      return undefined;
    });
    const text = (await record.textContent()) ?? "";
    expect(text).toContain(requestId);
    expect(text).toContain("/organizations/me");
    expect(text).toContain("200");
    expect(text).not.toContain(key);
    expect(page.url()).toBe(`${env.origin}/console/requests/${requestId}`);
  });

  it("hides every write action from a read-only key", async () => {
    await freshPage();
    await signIn(page, env.origin, env.key("acme-readonly"));
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByTestId("read-only-note").waitFor();
    expect(await page.getByRole("heading", { name: "New subscription" }).count()).toBe(0);
    const first = page.getByTestId("subscription-row").first();
    await first.getByRole("link").click();
    await page.getByTestId("health").waitFor();
    await page.getByRole("heading", { name: "Delivery attempts" }).waitFor();
    for (const name of ["Edit", "Rotate secret", "Delete", "Send test event", "Recover"]) {
      expect(await page.getByRole("button", { name, exact: true }).count(), name).toBe(0);
    }
    expect(await page.getByRole("button", { name: /^Resend/ }).count()).toBe(0);
    expect(await page.getByTestId("write-actions").count()).toBe(0);
  });

  it("lets a partner act on Globex, and not see or act on Hooli", async () => {
    await freshPage();
    await signIn(page, env.origin, env.key("northwind-partner"));
    await page.getByRole("link", { name: "Partner" }).click();
    const rows = page.getByTestId("managed-row");
    await rows.first().waitFor();
    const names = await rows.allTextContents();
    expect(names.some((n) => n.includes("Globex"))).toBe(true);
    expect(names.some((n) => n.includes("Hooli"))).toBe(false);

    await page.getByRole("button", { name: "Act on Globex" }).click();
    await expect.poll(() => page.getByTestId("acting-on").textContent(), POLL).toContain("Acting on Globex");
    await page.getByRole("link", { name: "Overview" }).click();
    await expect.poll(() => page.getByTestId("org-name").textContent(), POLL).toBe("Globex");
    // Globex granted no webhooks scope: the webhooks page says so, as the API does.
    await page.getByRole("link", { name: "Webhooks" }).click();
    const refused = main().getByRole("alert").first();
    await refused.waitFor();
    expect(await refused.textContent()).toContain("webhooks:read");

    // Hooli's grant was revoked: acting on it by id is refused, with the API's problem.
    await page.getByRole("link", { name: "Partner" }).click();
    await page.getByLabel("Act on an organization by id").fill(sandboxOrgId(SEED, "hooli"));
    await page.getByRole("button", { name: "Act on it" }).click();
    const banner = page.locator(".banner [role=alert]");
    await banner.waitFor();
    expect(await banner.textContent()).toMatch(/req_/);
    expect(await page.getByTestId("acting-on").count()).toBe(0);

    // The header's switch: straight to Initech, whose name the overview then shows.
    await page.getByLabel("Organization", { exact: true }).selectOption({ label: "Initech" });
    await expect.poll(() => page.getByTestId("acting-on").textContent(), POLL).toContain("Acting on Initech");
    await page.getByRole("link", { name: "Overview" }).click();
    await expect.poll(() => page.getByTestId("org-name").textContent(), POLL).toBe("Initech");
    expect(await page.getByRole("option", { name: "Hooli" }).count()).toBe(0);
  });

  it("shows every API error with its title, detail and requestId", async () => {
    await freshPage();
    await page.goto(`${env.origin}/console`);
    await page.locator("#api-key").fill(env.key("acme-expired"));
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    const direct = await api(env.origin, env.key("acme-expired"), "GET", "/api-keys/current");
    expect(direct.status).toBe(401);
    const text = (await alert.textContent()) ?? "";
    expect(text).toContain(direct.body.title as string);
    expect(text).toContain("expired");
    expect(await alert.getByTestId("error-request-id").textContent()).toMatch(/^req_/);

    // A key without scopes signs in, and the pages show the API's 403s.
    await signIn(page, env.origin, env.key("acme-noscopes"));
    await page.getByRole("link", { name: "Events" }).click();
    const refused = main().getByRole("alert").first();
    await refused.waitFor();
    const refusedText = (await refused.textContent()) ?? "";
    expect(refusedText).toContain("webhooks:read");
    expect(refusedText).toContain("(403)");
    expect(await refused.getByTestId("error-request-id").textContent()).toMatch(/^req_/);
  });

  it("is usable with the keyboard alone", async () => {
    await freshPage();
    await page.goto(`${env.origin}/console`);
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.id")).toBe("api-key");
    await page.keyboard.type(env.key("acme-full"));
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content");
    const focusedName = () => page.evaluate("document.activeElement?.textContent?.trim()");
    await until(
      "the Events link focused by Tab",
      async () => {
        await page.keyboard.press("Tab");
        return (await focusedName()) === "Events" ? true : undefined;
      },
      10_000,
    );
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 1, name: "Events" }).waitFor();
    expect(page.url()).toBe(`${env.origin}/console/events`);
  });

  it.each([375, 1440])(
    "has no serious or critical axe-core violation on any page at %i px",
    async (width) => {
      const pages: [string, string, string][] = [
        ["acme-full", "/console", "Overview"],
        ["acme-full", "/console/events", "Events"],
        ["acme-full", "/console/webhooks", "Webhooks"],
        ["acme-full", "/console/requests", "Requests"],
        ["northwind-partner", "/console/partner", "Partner"],
      ];
      const found: string[] = [];
      await freshPage(width);
      await page.goto(`${env.origin}/console`);
      await page.locator("#api-key").waitFor();
      found.push(...(await violations(`sign-in @${width}`)));
      for (const [keyName, path, heading] of pages) {
        await signIn(page, env.origin, env.key(keyName));
        await page.goto(`${env.origin}${path}`);
        await page.getByRole("heading", { level: 1, name: heading }).waitFor();
        await page.waitForLoadState("networkidle");
        found.push(...(await violations(`${path} @${width}`)));
      }
      // A subscription's page, with its attempts.
      await signIn(page, env.origin, env.key("acme-full"));
      await page.getByRole("link", { name: "Webhooks" }).click();
      await page.getByTestId("subscription-row").first().getByRole("link").click();
      await page.getByRole("heading", { name: "Delivery attempts" }).waitFor();
      await page.waitForLoadState("networkidle");
      found.push(...(await violations(`subscription @${width}`)));
      expect(found).toEqual([]);
    },
    600_000,
  );
});

async function violations(where: string): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${where}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}
