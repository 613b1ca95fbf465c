// The client against the whole platform (gateway, services, PGlite) on a real port: the platform each
// client-*.test.ts starts, and the helpers they share.
import { afterAll, beforeAll, beforeEach } from "vitest";
import { PlatformClient } from "../src/index.js";
import { type RunningPlatform, startPlatform, startReceiver } from "./embedded.js";

export const SEED = "client-test";

export let running: RunningPlatform;
export let receiver: Awaited<ReturnType<typeof startReceiver>>;

/**
 * Registers the hooks that start the platform on `port` (and a webhook receiver on `receiverPort`)
 * once per file. Each file has its own ports: vitest runs the files side by side.
 */
export function usePlatform(port: number, receiverPort?: number): void {
  // Starting the whole platform takes long on a loaded machine.
  beforeAll(async () => {
    running = await startPlatform({ port, seed: SEED });
    if (receiverPort !== undefined) receiver = await startReceiver(receiverPort);
  }, 180_000);
  afterAll(async () => {
    await receiver?.close();
    await running?.close();
  });
  // Each test starts with fresh one-minute rate-limit windows.
  beforeEach(() => running.clock.advance(61_000));
}

/** A fetch that records every request it passes on, and may fail or answer in its place. */
export function recordingFetch(
  intercept?: (call: number, url: string, init: RequestInit) => Promise<Response | undefined> | Response | undefined,
) {
  const calls: {
    url: string;
    method: string;
    headers: Record<string, string>;
    status?: number;
    retryAfter?: string | null;
  }[] = [];
  const fetcher = async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = String(input);
    const entry = {
      url,
      method: init.method ?? "GET",
      headers: { ...(init.headers as Record<string, string>) },
      status: undefined as number | undefined,
      retryAfter: undefined as string | null | undefined,
    };
    calls.push(entry);
    const replaced = await intercept?.(calls.length, url, init);
    const res = replaced ?? (await fetch(input, init));
    entry.status = res.status;
    entry.retryAfter = res.headers.get("retry-after");
    return res;
  };
  return { calls, fetch: fetcher as typeof fetch };
}

export function client(key = "acme-full", extra: Partial<ConstructorParameters<typeof PlatformClient>[0]> = {}) {
  return new PlatformClient({
    apiKey: running.keys[key]!,
    baseUrl: running.baseUrl,
    // Waiting moves the platform's clock instead of the test's time.
    sleep: async (ms) => running.clock.advance(ms),
    ...extra,
  });
}

let n = 0;
export async function someAccountId(): Promise<string> {
  const page = await client().accounts.list({ limit: 1 });
  return page.items[0]!.id;
}
export const newDeal = async () => ({
  name: `Client test deal ${++n}`,
  accountId: await someAccountId(),
  stage: "Discovery",
});
