import { randomBytes } from "node:crypto";
import { create, toJson } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { ContactService, CrmAdminService } from "@platform/contracts/crm";
import { MeetingBookedSchema } from "@platform/contracts/events/scheduling";
import { systemClock } from "@platform/kit/clock";
import { adminClientInterceptor, httpTransport, signingInterceptor } from "@platform/kit/connect";
import { type Db, openPg } from "@platform/kit/db";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { KafkaBus } from "@platform/kit/kafka-bus";
import { createLogger } from "@platform/kit/logger";
import { toBusMessage } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCrmConfig } from "../src/config.js";
import { type RunningCrm, start } from "../src/start.js";
import { meetingOf } from "./builders.js";

// The timeline projection through the real infrastructure: the crm-data service started as
// its process would be (startService) on its own Postgres database, a MeetingBooked
// envelope published to Kafka, and the activity read back through the service's RPC.
const ADMIN_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const BROKERS = process.env.KAFKA_BROKERS ?? "127.0.0.1:19092";
const database = `crm_it_${randomBytes(4).toString("hex")}`;
const CONTEXT_SECRET = "crm-infra-context-secret-0123456789";
const ADMIN_SECRET = "crm-infra-admin-secret-0123456789";
const logger = createLogger("crm-infra-test", "silent");

let admin: Db;
let service: RunningCrm | undefined;
let bus: KafkaBus;
const orgId = newId("org_");

beforeAll(async () => {
  admin = openPg({ url: ADMIN_URL, schema: "public", max: 1 });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  service = await start(
    loadCrmConfig({
      DATABASE_URL: url.toString(),
      PORT: "0",
      ADMIN_PORT: "0",
      KAFKA_BROKERS: BROKERS,
      PLATFORM_CONTEXT_SECRET: CONTEXT_SECRET,
      PLATFORM_ADMIN_SECRET: ADMIN_SECRET,
      SANDBOX_ENABLED: "false",
      LOG_LEVEL: "silent",
    }),
    { logger },
  );
  bus = new KafkaBus({ brokers: BROKERS.split(","), clientId: "crm-infra-test", logger });
}, 60_000);

afterAll(async () => {
  await bus?.close();
  await service?.stop();
  await admin?.exec(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.close();
}, 60_000);

describe("meeting activity through Kafka", () => {
  it("puts a booked meeting on the attendee contact's timeline", async () => {
    if (!service) throw new Error("service not started");
    const adminClient = createClient(
      CrmAdminService,
      httpTransport(`http://127.0.0.1:${service.adminPort}`, [adminClientInterceptor(ADMIN_SECRET)]),
    );
    await adminClient.upsertAccounts({ orgId, accounts: [{ crmId: "ACC", name: "Kafka Corp" }] });
    const { contacts } = await adminClient.upsertContacts({
      orgId,
      contacts: [
        { crmId: "CON", firstName: "Franz", lastName: "Kafka", email: "franz@kafka.example", accountCrmId: "ACC" },
      ],
    });
    const contactId = contacts[0]?.id as string;

    const meeting = meetingOf({
      id: newId("mtg_"),
      orgId,
      start: new Date(Date.now() + 86_400_000),
      updated: new Date(),
      attendee: "Franz@Kafka.example",
    });
    const envelope = {
      id: newId("evt_"),
      type: EVENT_TYPES.meetingBooked,
      source: "scheduling",
      subject: meeting.id,
      time: new Date().toISOString(),
      data: toJson(MeetingBookedSchema, create(MeetingBookedSchema, { meeting })),
    };
    await bus.publish(TOPICS.scheduling, [toBusMessage(envelope, orgId)]);

    const api = createClient(
      ContactService,
      httpTransport(`http://127.0.0.1:${service.port}`, [
        signingInterceptor(CONTEXT_SECRET, systemClock, () => ({
          principal: "api",
          requestId: newId("req_"),
          orgId,
          tokenId: "tok_infra",
          scopes: ["contacts:read"],
        })),
      ]),
    );
    const items = await eventually(
      "the meeting on the contact's timeline",
      async () => {
        const res = await api.listContactActivity({ contactId, types: ["meeting"] });
        return res.items.length > 0 ? res.items : undefined;
      },
      45_000,
      250,
    );
    expect(items).toHaveLength(1);
    expect(items[0]?.reference).toEqual({
      case: "meeting",
      value: expect.objectContaining({ id: meeting.id, title: "Intro call", hostName: "Blake Rivera" }),
    });
  }, 60_000);
});
