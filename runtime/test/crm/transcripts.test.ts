import { newId } from "@platform/kit/ids";
import { describe, expect, it } from "vitest";
import { acct, acme, clock, crmAdmin, expectProblem, get, keys, mtg, ok, tokenWith, useCrmPlatform } from "./setup.js";

// Meeting transcripts.

useCrmPlatform();

describe("transcripts", () => {
  const base = (label: string) => `/scheduled-meetings/${mtg(label)}`;

  it("returns the full transcript: chunks with words, full duration, compiledText", async () => {
    const t = await ok(`${base("acme-intro-completed")}/transcript`);
    expect(t.meetingId).toBe(mtg("acme-intro-completed"));
    expect(t.botId).toMatch(/^trs_/);
    expect(t.durationSeconds).toBe(1799);
    expect(t.windowStart).toBe(0);
    expect(t.windowEnd).toBe(1799);
    expect(t.chunks).toHaveLength(120);
    const [first] = t.chunks;
    expect(first).toEqual({
      chunkId: expect.stringMatching(/^chnk_/),
      speaker: "Blake Rivera",
      hostId: expect.stringMatching(/^usr_/),
      language: "en",
      startTime: 0,
      endTime: 14,
      text: expect.any(String),
      words: expect.arrayContaining([{ text: expect.any(String), startTime: 0, endTime: expect.any(Number) }]),
      isFinal: true,
    });
    expect(t.chunks[1].hostId).toBeNull();
    expect(t.compiledText.split("\n")).toHaveLength(120);
    expect(t.compiledText.split("\n")[0]).toBe(`Blake Rivera: ${first.text}`);
  });

  it("windows by startTime/endTime and filters by language, durationSeconds staying the full length", async () => {
    const t = await ok(`${base("acme-intro-completed")}/transcript?startTime=60&endTime=120`);
    expect(t.windowStart).toBe(60);
    expect(t.windowEnd).toBe(120);
    expect(t.durationSeconds).toBe(1799);
    expect(t.chunks.map((c: { startTime: number }) => c.startTime)).toEqual([60, 75, 90, 105]);
    const de = await ok(`${base("acme-intro-completed")}/transcript?language=de`);
    expect(de.chunks).toHaveLength(40);
    expect(de.chunks.every((c: { language: string }) => c.language === "de")).toBe(true);
    expect(de.durationSeconds).toBe(1799);
    expect(de.compiledText.split("\n").every((l: string) => l.startsWith("Johanna Weber: "))).toBe(true);
    const end = await ok(`${base("acme-intro-completed")}/transcript?startTime=1700`);
    expect(end.windowEnd).toBe(1799);
  });

  it("rejects bad windows with 422 transcript-window-invalid", async () => {
    await expectProblem(
      `${base("acme-intro-completed")}/transcript?startTime=200&endTime=100`,
      422,
      "transcript-window-invalid",
    );
    await expectProblem(`${base("acme-intro-completed")}/transcript?endTime=5000`, 422, "transcript-window-invalid");
    await expectProblem(`${base("acme-intro-completed")}/transcript?startTime=abc`, 400, "invalid-field");
  });

  it("answers meeting-not-found, transcript-not-available and transcript-expired", async () => {
    await expectProblem(`${base("nope")}/transcript`, 404, "meeting-not-found");
    await expectProblem(`${base("acme-intro-completed")}/transcript`, 404, "meeting-not-found", keys["umbrella-full"]);
    await expectProblem(`${base("acme-intro-upcoming-amer")}/transcript`, 404, "transcript-not-available");
    await expectProblem(`${base("acme-failed-recording")}/transcript`, 404, "transcript-not-available");
    await expectProblem(`${base("acme-archive-2025")}/transcript`, 410, "transcript-expired");
    await expectProblem(`${base("acme-archive-2025")}/transcript/chunks`, 410, "transcript-expired");
    await expectProblem(`${base("acme-archive-2025")}/chat`, 410, "transcript-expired");
    await expectProblem(`${base("acme-intro-upcoming-amer")}/chat`, 404, "transcript-not-available");
    // The failed bot recorded nothing, so its chat has the transcript's error too.
    await expectProblem(`${base("acme-failed-recording")}/chat`, 404, "transcript-not-available");
    await expectProblem(`/scheduled-meetings/${acct("x")}/transcript`, 400, "invalid-resource-id");
  });

  it("lists chunks without words, with meetingId, filtered by language, speaker and hostId", async () => {
    const url = `${base("acme-intro-completed")}/transcript/chunks`;
    const page = await ok(url);
    expect(page.items).toHaveLength(25);
    expect(page.items[0]).toEqual({
      chunkId: expect.stringMatching(/^chnk_/),
      meetingId: mtg("acme-intro-completed"),
      speaker: "Blake Rivera",
      hostId: expect.stringMatching(/^usr_/),
      language: "en",
      startTime: 0,
      endTime: 14,
      text: expect.any(String),
      isFinal: true,
    });
    const hostId = page.items[0].hostId as string;
    const starts = page.items.map((c: { startTime: number }) => c.startTime);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    const desc = await ok(`${url}?sort=-startTime&limit=2`);
    expect(desc.items.map((c: { startTime: number }) => c.startTime)).toEqual([1785, 1770]);
    const next = await ok(`${url}?sort=-startTime&limit=2&cursor=${encodeURIComponent(desc.nextCursor)}`);
    expect(next.items.map((c: { startTime: number }) => c.startTime)).toEqual([1755, 1740]);
    const ada = await ok(`${url}?speaker=LOVELACE&limit=100`);
    expect(ada.items).toHaveLength(40);
    const de = await ok(`${url}?language=de&limit=100`);
    expect(de.items.every((c: { speaker: string }) => c.speaker === "Johanna Weber")).toBe(true);
    const host = await ok(`${url}?hostId=${hostId}&limit=100`);
    expect(host.items).toHaveLength(40);
    expect((await ok(`${url}?language=fr`)).items).toEqual([]);
    await expectProblem(`${url}?sort=speaker`, 400, "invalid-sort-field");
    await expectProblem(`${url}?hostId=blake`, 400, "invalid-filter");
    await expectProblem(`${url}?cursor=${encodeURIComponent(desc.nextCursor)}`, 400, "invalid-cursor");
  });

  it("lists chat, private messages only when the bot's owner was a party", async () => {
    const url = `${base("acme-intro-completed")}/chat`;
    const chat = await ok(url);
    expect(chat.items.map((m: { text: string }) => m.text)).toEqual([
      "Welcome! The agenda is in the invite.",
      "Could you share the pricing sheet?",
      "Off the record: budget is approved.",
      "Thanks all, follow-up by email.",
    ]);
    expect(chat.items[2]).toEqual({
      messageId: expect.stringMatching(/^chat_/),
      meetingId: mtg("acme-intro-completed"),
      sender: "Ada Lovelace",
      hostId: null,
      sentAt: expect.stringMatching(/Z$/),
      text: "Off the record: budget is approved.",
      recipients: "private",
    });
    const first = await ok(`${url}?limit=3`);
    expect(first.items).toHaveLength(3);
    const rest = await ok(`${url}?limit=3&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(rest.items.map((m: { text: string }) => m.text)).toEqual(["Thanks all, follow-up by email."]);
    expect(rest.nextCursor).toBeNull();
    await expectProblem(`${url}?sort=sentAt`, 400, "invalid-sort-field");
  });

  it("shows the bot status, errorReason when failed, 404 bot-not-configured without a bot", async () => {
    const done = await ok(`${base("acme-intro-completed")}/bot`);
    expect(done).toEqual({
      botId: expect.stringMatching(/^trs_/),
      meetingId: mtg("acme-intro-completed"),
      status: "done",
      startedAt: expect.any(String),
      endedAt: expect.any(String),
      joinUrl: expect.any(String),
      provider: "video_a",
      recordingAvailable: true,
      transcriptChunksAvailable: 120,
      errorReason: null,
    });
    const failed = await ok(`${base("acme-failed-recording")}/bot`);
    expect(failed.status).toBe("failed");
    expect(failed.errorReason).toMatch(/waiting room/);
    expect(failed.transcriptChunksAvailable).toBe(0);
    await expectProblem(`${base("acme-intro-upcoming-amer")}/bot`, 404, "bot-not-configured");
    await expectProblem(`${base("nope")}/bot`, 404, "meeting-not-found");
    const p = await expectProblem(
      `${base("acme-intro-completed")}/bot`,
      403,
      "insufficient-scope",
      await tokenWith(["accounts:read"]),
    );
    expect(p.requiredScope).toBe("transcripts:read");
  });

  it("streams a recording through the ingestion plane; it expires 12 months after the meeting end, by the clock", async () => {
    const meetingId = mtg("acme-intro-upcoming-apac");
    const end = new Date(clock.now().getTime() + 3 * 86_400_000);
    const admin = crmAdmin();
    const status = await admin.updateBotStatus({
      orgId: acme,
      meetingId,
      botId: newId("trs_"),
      ownerUserId: "",
      status: "recording",
      joinUrl: "https://meet.example/apac",
      provider: "video_a",
    });
    expect(status.bot?.status).toBe("recording");
    await expectProblem(`${base("acme-intro-upcoming-apac")}/transcript`, 404, "transcript-not-available");
    const appended = await admin.appendTranscriptChunks({
      orgId: acme,
      meetingId,
      chunks: [
        {
          sequence: 0,
          speaker: "Srinivasa Ramanujan",
          language: "en",
          startTime: 0,
          endTime: 4,
          text: "Hello",
          words: [{ text: "Hello", startTime: 0, endTime: 1 }],
        },
        { sequence: 1, speaker: "Devon Park", language: "en", startTime: 4, endTime: 9, text: "Welcome" },
      ],
    });
    expect(appended).toMatchObject({ appended: 2, total: 2 });
    // Repeating a batch stores nothing twice.
    expect(
      (
        await admin.appendTranscriptChunks({
          orgId: acme,
          meetingId,
          chunks: [{ sequence: 1, speaker: "Devon Park", language: "en", startTime: 4, endTime: 9, text: "Welcome" }],
        })
      ).appended,
    ).toBe(0);
    const t = await ok(`${base("acme-intro-upcoming-apac")}/transcript`);
    expect(t.compiledText).toBe("Srinivasa Ramanujan: Hello\nDevon Park: Welcome");
    expect((await ok(`${base("acme-intro-upcoming-apac")}/bot`)).transcriptChunksAvailable).toBe(2);

    const saved = clock.now();
    const meeting = (await ok(`/scheduled-meetings/${meetingId}`)).endTime as string;
    expect(new Date(meeting).getTime()).toBeLessThan(end.getTime());
    clock.set(new Date(new Date(meeting).getTime() + 365 * 86_400_000 - 60_000));
    expect((await get(`${base("acme-intro-upcoming-apac")}/transcript`)).statusCode).toBe(200);
    clock.advance(61_000 + 86_400_000);
    await expectProblem(`${base("acme-intro-upcoming-apac")}/transcript`, 410, "transcript-expired");
    clock.set(new Date(saved.getTime() + 61_000));
  });
});
