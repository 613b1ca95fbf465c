import { CrmAdminService } from "@platform/contracts/crm";
import { IdentityAdminService } from "@platform/contracts/identity";
import { sandboxAccountId, sandboxContactId, sandboxMeetingId, sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import type { EmbeddedPlatform } from "../../src/platform.js";
import { apiTest, CLOSE_TIMEOUT_MS, START_TIMEOUT_MS } from "../support/platform.js";

// crm-data end to end on the embedded platform: gateway → crm-data → PGlite, the timeline
// projection fed by scheduling's and the email system's events over the in-process bus. Each
// test file of this folder starts a platform of its own with this setup.
export const SEED = "crm-api-test";
export const t = apiTest({ name: SEED, admin: true });
export const { call, problemType, keys, clock, settle } = t;
export let platform: EmbeddedPlatform;

export const acme = sandboxOrgId(SEED, "acme");
export const acct = (key: string) => sandboxAccountId(SEED, key);
export const cont = (key: string) => sandboxContactId(SEED, key);
export const mtg = (label: string) => sandboxMeetingId(SEED, label);

/** GET with a raw API key (acme-full when unset). */
export const get = (url: string, apiKey?: string) => call("GET", url, { apiKey });
export const ok = async (url: string, apiKey?: string) => {
  const res = await get(url, apiKey);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
export async function expectProblem(url: string, status: number, name: string, apiKey?: string) {
  const res = await get(url, apiKey);
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toContain("application/problem+json");
  expect(res.json().type).toBe(problemType(name));
  return res.json();
}

export const identityAdmin = () => t.adminClient(IdentityAdminService);
export const crmAdmin = () => t.adminClient(CrmAdminService);

export async function tokenWith(scopes: string[]): Promise<string> {
  return (await identityAdmin().createToken({ orgId: acme, scopes })).key;
}

/** Starts the platform before the file's tests, with the sandbox's meetings on the timelines. */
export function useCrmPlatform(): void {
  beforeAll(async () => {
    platform = await t.start();
    // The sandbox's meetings reach the projection as scheduling's events.
    await settle();
  }, START_TIMEOUT_MS);
  afterAll(() => t.close(), CLOSE_TIMEOUT_MS);
  // Past the per-minute read limit of the sandbox keys between tests.
  beforeEach(() => clock.advance(61_000));
}
