import { iso } from "@platform/contracts/rest/json";
import type { GetAvailabilityResponse, HostSlots } from "@platform/contracts/scheduling";
import { hostRefJson } from "./scheduling.js";

/**
 * The availability response, serialized, from scheduling's compact answer: the same JSON
 * `availabilityJson` (mapping/scheduling.ts) describes (the Availability schema), written
 * straight into one buffer. A large round robin has ten thousand slots and more; building an
 * object per slot and serializing it cost more than the rest of the gateway's work, and so did
 * the garbage of a buffer per part and per distinct time.
 *
 * Every slot is the same ASCII JSON with fixed-width holes: its two ISO 8601 times (24
 * characters: years 0000–9999) and its token. A host's slots are laid down from one template by
 * `Buffer.fill` (the token's head, when scheduling answers in parts, is already in it), then
 * each slot's dates, hours and minutes and the rest of its token are written into their holes.
 */

/** Whether scheduling answered in a compact form (start minutes and tokens whole or in parts). */
export const isCompactAvailability = (res: GetAvailabilityResponse) =>
  res.hostGroups.some((g) => g.hosts.some((h) => h.slotTokenLength > 0 || h.slotTokenTailBytes > 0));

const SLOT_HEAD = '{"startTime":"';
const SLOT_MIDDLE = '","endTime":"';
const SLOT_TOKEN = '","slotToken":"';
const SLOT_TAIL = '"},';
const ISO_TEMPLATE = "0000-00-00T00:00:00.000Z";
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const MINUTES_PER_DAY = 1440;

/** What a host's part of the body needs: its text before the slots, and each slot's token. */
interface HostPart {
  prefix: Buffer;
  startMinutes: number[];
  durationMinutes: number;
  /** The text every token starts with ("" when scheduling sent whole tokens). */
  tokenHead: string;
  /**
   * The rest of each token, `width` characters each, in slot order. A string, not a Buffer: a
   * Buffer of this size is memory outside V8's heap, and hundreds of kilobytes of it an answer
   * made V8 run a full mark-compact every second or so to account for it.
   */
  tokenRest: string;
  width: number;
}

function hostPart(h: HostSlots, first: boolean): HostPart {
  if (!h.host) throw new Error("scheduling returned a host group entry without its host");
  const prefix = Buffer.from(`${first ? "" : ","}{"host":${JSON.stringify(hostRefJson(h.host))},"slots":[`, "utf8");
  const count = h.startMinutes.length;
  if (h.slotTokenTailBytes > 0) {
    // Token parts: the tails' base64url is ours to produce, so only the head needs checking.
    const tailBytes = h.slotTokenTailBytes;
    if (
      tailBytes % 3 !== 0 ||
      h.slotTokenTails.length !== count * tailBytes ||
      h.slotTokenHead.length % 4 !== 0 ||
      !BASE64URL.test(h.slotTokenHead)
    ) {
      throw new Error("scheduling returned slot token parts that do not match its slots");
    }
    const tails = h.slotTokenTails;
    const rest = Buffer.from(tails.buffer, tails.byteOffset, tails.length).toString("base64url");
    return {
      prefix,
      startMinutes: h.startMinutes,
      durationMinutes: h.durationMinutes,
      tokenHead: h.slotTokenHead,
      tokenRest: rest,
      width: (tailBytes / 3) * 4,
    };
  }
  const width = h.slotTokenLength;
  if (h.slotTokens.length !== count * width || !BASE64URL.test(h.slotTokens)) {
    throw new Error("scheduling returned slot tokens that do not match its slots");
  }
  return {
    prefix,
    startMinutes: h.startMinutes,
    durationMinutes: h.durationMinutes,
    tokenHead: "",
    tokenRest: h.slotTokens,
    width,
  };
}

/** The bytes of one slot of `part`, with its holes' offsets. */
function slotTemplate(part: HostPart) {
  const text = `${SLOT_HEAD}${ISO_TEMPLATE}${SLOT_MIDDLE}${ISO_TEMPLATE}${SLOT_TOKEN}${part.tokenHead}${"0".repeat(part.width)}${SLOT_TAIL}`;
  const startAt = SLOT_HEAD.length;
  const endAt = startAt + ISO_TEMPLATE.length + SLOT_MIDDLE.length;
  const tokenAt = endAt + ISO_TEMPLATE.length + SLOT_TOKEN.length + part.tokenHead.length;
  return { bytes: Buffer.from(text, "latin1"), startAt, endAt, tokenAt };
}

/** Writes the ISO 8601 text of `minute` (epoch minutes) over an `ISO_TEMPLATE` at `at`. */
function isoWriter() {
  // "YYYY-MM-DD" of each day met, as character codes: an answer spans a few dozen days.
  const dates = new Map<number, number[]>();
  return (out: Buffer, at: number, minute: number) => {
    const day = Math.floor(minute / MINUTES_PER_DAY);
    let date = dates.get(day);
    if (date === undefined) {
      const text = new Date(day * MINUTES_PER_DAY * 60_000).toISOString();
      date = Array.from(text.slice(0, 10), (c) => c.charCodeAt(0));
      dates.set(day, date);
    }
    for (let i = 0; i < 10; i++) out[at + i] = date[i]!;
    const ofDay = minute - day * MINUTES_PER_DAY;
    const hours = Math.floor(ofDay / 60);
    const minutes = ofDay - hours * 60;
    out[at + 11] = 48 + Math.floor(hours / 10);
    out[at + 12] = 48 + (hours % 10);
    out[at + 14] = 48 + Math.floor(minutes / 10);
    out[at + 15] = 48 + (minutes % 10);
  };
}

/** `alloc`: where the body's bytes go (the route passes reused buffers: http/body-buffers.ts). */
export function availabilityBody(
  res: GetAvailabilityResponse,
  alloc: (size: number) => Buffer = Buffer.allocUnsafe,
): Buffer {
  const head = Buffer.from('{"hostGroups":[', "latin1");
  const tail = Buffer.from(`],"matchedAt":${JSON.stringify(iso(res.matchTime, "match_time"))}}`, "latin1");
  const groups = res.hostGroups.map((group) => group.hosts.map((h, n) => hostPart(h, n === 0)));
  const templates = groups.map((parts) => parts.map(slotTemplate));
  // "[" or ",[" and "]" per group, "]}" per host; a host's slots without the last one's comma.
  let size = head.length + tail.length;
  groups.forEach((parts, g) => {
    size += (g === 0 ? 1 : 2) + 1;
    parts.forEach((part, n) => {
      const count = part.startMinutes.length;
      size += part.prefix.length + Math.max(0, count * templates[g]![n]!.bytes.length - 1) + 2;
    });
  });

  const out = alloc(size);
  const writeIso = isoWriter();
  let at = head.copy(out, 0);
  groups.forEach((parts, g) => {
    at += out.write(g === 0 ? "[" : ",[", at, "latin1");
    parts.forEach((part, n) => {
      at += part.prefix.copy(out, at);
      const { bytes, startAt, endAt, tokenAt } = templates[g]![n]!;
      const { startMinutes, durationMinutes, tokenRest, width } = part;
      const slotsEnd = at + Math.max(0, startMinutes.length * bytes.length - 1);
      if (slotsEnd > at) out.fill(bytes, at, slotsEnd);
      for (let i = 0; i < startMinutes.length; i++) {
        const slot = at + i * bytes.length;
        const start = startMinutes[i]!;
        writeIso(out, slot + startAt, start);
        writeIso(out, slot + endAt, start + durationMinutes);
        // A loop, not Buffer#copy: for a few dozen bytes the call costs more than the copy.
        const token = slot + tokenAt;
        const from = i * width;
        for (let k = 0; k < width; k++) out[token + k] = tokenRest.charCodeAt(from + k);
      }
      at = slotsEnd;
      at += out.write("]}", at, "latin1");
    });
    at += out.write("]", at, "latin1");
  });
  at += tail.copy(out, at);
  if (at !== size) throw new Error(`availability body: wrote ${at} bytes of ${size}`);
  return out;
}
