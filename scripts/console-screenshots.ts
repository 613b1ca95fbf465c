import { mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Page } from "playwright-core";
import {
  api,
  bookMeeting,
  launchBrowser,
  signIn,
  startConsolePlatform,
  startReceiver,
  until,
} from "../console/test/support/console-browser.js";

// `npm run console:screenshots`: one PNG per console page into docs/console/, from the embedded
// runtime on a fresh data directory (its own port: SCREENSHOT_PORT, else one in TEST_PORT_BASE's
// window) in Debian's chromium. A booking, a failing subscription and a test ping first, so the
// pages have something to show.

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..");
const OUT = join(ROOT, "docs/console");
const MAX_BYTES = 200 * 1024;

if (process.argv.includes("--help")) {
  console.log(
    "Usage: npm run console:screenshots\n\nWrites docs/console/<page>.png (1,280 × 800, each under 200 KB) from a fresh embedded platform.\nSCREENSHOT_PORT sets its port.",
  );
  process.exit(0);
}

mkdirSync(OUT, { recursive: true });
console.log("screenshots: starting the embedded platform and chromium…");
const port = process.env.SCREENSHOT_PORT ? Number(process.env.SCREENSHOT_PORT) : undefined;
const [env, browser] = await Promise.all([startConsolePlatform(port), launchBrowser()]);
const receiver = await startReceiver();
let failed = false;
try {
  const key = env.key("acme-full");
  console.log("screenshots: a booking, a failing subscription and its attempts…");
  await bookMeeting(env.origin, key);
  const sub = await api(env.origin, key, "POST", "/webhook-subscriptions", {
    body: { endpointUrl: receiver.url, events: ["scheduling.smartscheduler.booked"], description: "Staging receiver" },
  });
  const subId = sub.body.id as string;
  await api(env.origin, key, "POST", `/webhook-subscriptions/${subId}/test`);
  await until("the failed attempt", async () => {
    const list = await api(env.origin, key, "GET", `/webhook-subscriptions/${subId}/deliveries`);
    return list.body.items?.some((d) => d.status === "failed") ? true : undefined;
  });

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const shot = async (name: string, ready: (p: Page) => Promise<unknown>) => {
    await ready(page);
    await page.waitForLoadState("networkidle");
    const path = join(OUT, `${name}.png`);
    await page.screenshot({ path });
    const bytes = statSync(path).size;
    console.log(`screenshots: docs/console/${name}.png (${Math.round(bytes / 1024)} KB)`);
    if (bytes > MAX_BYTES) {
      console.error(`screenshots: docs/console/${name}.png is over 200 KB`);
      failed = true;
    }
  };
  const heading = (p: Page, name: string) => p.getByRole("heading", { level: 1, name }).waitFor();

  await page.goto(`${env.origin}/console`);
  await shot("sign-in", (p) => p.locator("#api-key").waitFor());
  await signIn(page, env.origin, key);
  await shot("overview", async (p) => p.getByTestId("rate-read").waitFor());
  await shot("events", async (p) => {
    await p.getByRole("link", { name: "Events" }).click();
    await heading(p, "Events");
    await p.getByTestId("event-row").first().waitFor();
    await p.getByRole("region", { name: "Event log" }).getByRole("button", { name: "Payload" }).first().click();
  });
  await shot("webhooks", async (p) => {
    await p.getByRole("link", { name: "Webhooks" }).click();
    await p.getByTestId("subscription-row").first().waitFor();
  });
  await shot("subscription", async (p) => {
    await p.getByRole("link", { name: receiver.url }).click();
    await p.getByTestId("attempt-row").first().waitFor();
  });
  await shot("requests", async (p) => {
    await p.getByRole("link", { name: "Requests" }).click();
    await heading(p, "Requests");
  });
  await signIn(page, env.origin, env.key("northwind-partner"));
  await shot("partner", async (p) => {
    await p.getByRole("link", { name: "Partner" }).click();
    await p.getByTestId("managed-row").first().waitFor();
  });
  await context.close();
} catch (err) {
  console.error(err);
  failed = true;
} finally {
  await browser.close();
  await receiver.close();
  await env.close();
}
process.exit(failed ? 1 : 0);
