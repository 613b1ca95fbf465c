// What the scheduled-meetings tests share: a gateway with a key holding both scheduling
// scopes, the expected shape of a meeting, and the requests of the three writes.
import { afterEach, beforeEach } from "vitest";
import { ADA, API, BEN, buildTestGateway, ORG, request, type TestGateway } from "./harness.js";

/** The gateway of the current test and its key; set by useMeetingsGateway's beforeEach. */
export let gw: TestGateway;
export let key: string;

/** A fresh gateway for each of the file's tests. */
export function useMeetingsGateway(): void {
  beforeEach(async () => {
    gw = await buildTestGateway();
    key = gw.identity.addToken({ orgId: ORG, scopes: ["smart-scheduling:read", "smart-scheduling:write"] });
  });
  afterEach(async () => {
    await gw.app.close();
  });
}

export const MEETING_FIELDS = [
  "id",
  "orgId",
  "host",
  "attendee",
  "additionalAttendees",
  "title",
  "startTime",
  "endTime",
  "timeZone",
  "location",
  "conferencing",
  "calendarEventId",
  "status",
  "createdAt",
  "updatedAt",
  "smartScheduling",
  "personalScheduling",
  "teamScheduling",
  "meetingAi",
].sort();

export const ADA_HOST = {
  userId: ADA,
  email: "ada@acme.example",
  firstName: "Ada",
  lastName: "Admin",
  displayName: "Ada Admin",
};
export const BEN_HOST = {
  userId: BEN,
  email: "ben@acme.example",
  firstName: "Ben",
  lastName: "Baker",
  displayName: "Ben Baker",
};
export const QUESTION = "What would you like to discuss?";
export const NOW = "2026-01-15T12:00:00.000Z";

export function booking(overrides: Record<string, unknown> = {}) {
  return {
    slotToken: gw.scheduling.slotToken(),
    attendee: {
      firstName: "Robin",
      lastName: "Ray",
      email: "robin@customer.example",
      phone: "+442071838750",
      timeZone: "Europe/London",
    },
    formValues: { region: "emea", seats: 12 },
    surveyResponses: { [QUESTION]: "Onboarding" },
    additionalAttendees: ["kim@customer.example"],
    ...overrides,
  };
}

/** A request of the test's key to `${API}${url}`; see harness.request. */
export function send(
  method: "POST" | "PATCH" | "DELETE",
  url: string,
  body?: unknown,
  headers: Record<string, string | undefined> = {},
  apiKey = key,
) {
  return request(gw.app, method, `${API}${url}`, apiKey, body, headers);
}

export const book = (body: unknown, headers: Record<string, string | undefined> = {}, query = "") =>
  send("POST", `/scheduled-meetings${query}`, body, headers);
export const reschedule = (id: string, body: unknown, headers: Record<string, string | undefined> = {}) =>
  send("PATCH", `/scheduled-meetings/${id}`, body, headers);
export const cancel = (id: string, query = "", headers: Record<string, string | undefined> = {}) =>
  send("DELETE", `/scheduled-meetings/${id}${query}`, undefined, headers);
