import { createHash } from "node:crypto";
import { SHA256_IV, SHA256_K } from "./sha256-constants.js";
import { LANE_BATCH, LAYOUT, slotMacLanes } from "./slot-mac-lanes.js";

/**
 * HMAC-SHA256 (RFC 2104, FIPS 180-4) specialised for the slot tokens' hot path: one key, a
 * 42-byte message, many messages that differ only in bytes 36–39 (a slot's start), and only the
 * first 12 bytes of the tag kept. Availability signs ten thousand tokens per answer; a general
 * HMAC pays per message for object set-up, buffering, padding and a full digest, where here:
 * - the key's inner and outer states are computed once (as any HMAC implementation may);
 * - the padded 64-byte block of each message is fixed but for one 32-bit word, so the first nine
 *   rounds of the inner compression, which read only words 0–8, are computed once per prefix;
 * - the outer block is the inner digest and constant padding, and only 3 output words are kept.
 * The tags are byte for byte those of `createHmac("sha256", key)` truncated to 12 bytes (a test
 * compares them), so node:crypto verifies what this signs.
 */

const K = Int32Array.from(SHA256_K);

const IV = Int32Array.from(SHA256_IV);

/** The message length this MAC takes, in bytes. */
export const SLOT_MAC_MESSAGE_BYTES = 42;
/** The 32-bit word of the padded block that varies between messages (bytes 36–39). */
const VARYING_WORD = 9;

/** Fills w[16..63] from w[0..15] (the message schedule). */
function expand(w: Int32Array): void {
  for (let t = 16; t < 64; t++) {
    const x = w[t - 15]!;
    const y = w[t - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[t] = (w[t - 16]! + s0 + w[t - 7]! + s1) | 0;
  }
}

/**
 * Rounds `from`..63 of SHA-256's compression on the working variables `v` (a..h, updated in
 * place) with the schedule `w`.
 */
function rounds(v: Int32Array, w: Int32Array, from: number, to: number): void {
  let a = v[0]!;
  let b = v[1]!;
  let c = v[2]!;
  let d = v[3]!;
  let e = v[4]!;
  let f = v[5]!;
  let g = v[6]!;
  let h = v[7]!;
  for (let t = from; t < to; t++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[t]! + w[t]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  v[0] = a;
  v[1] = b;
  v[2] = c;
  v[3] = d;
  v[4] = e;
  v[5] = f;
  v[6] = g;
  v[7] = h;
}

/** The state after compressing one 64-byte block from `state`. */
function compressBlock(state: Int32Array, block: Uint8Array): Int32Array {
  const w = new Int32Array(64);
  for (let i = 0; i < 16; i++) {
    w[i] = (block[4 * i]! << 24) | (block[4 * i + 1]! << 16) | (block[4 * i + 2]! << 8) | block[4 * i + 3]!;
  }
  expand(w);
  const v = Int32Array.from(state);
  rounds(v, w, 0, 64);
  return v.map((x, i) => (x + state[i]!) | 0);
}

/** Signs messages of `SLOT_MAC_MESSAGE_BYTES` that share their first 36 and last 2 bytes. */
export interface SlotMac {
  /**
   * Fixes the message's bytes other than 36–39 (`message` is read whole; its bytes 36–39 are
   * ignored). Call again whenever those bytes change.
   */
  setMessage(message: Uint8Array): void;
  /**
   * Writes the first 12 bytes of the HMAC of the fixed message with bytes 36–38 set to the
   * 24-bit `varying` (big-endian, byte 39 as fixed) into `out` at `offset`.
   */
  tag(varying: number, out: Uint8Array, offset: number): void;
  /**
   * `tag(varying[i], out, offset + i * stride)` for i in 0..count−1, four at a time where
   * WebAssembly SIMD is available (slot-mac-lanes.ts).
   */
  tags(varying: ArrayLike<number>, count: number, out: Uint8Array, offset: number, stride: number): void;
}

/** Writes `value` into the four lanes of the i32x4 at word `at`. */
function splat(words: Int32Array, at: number, value: number): void {
  words[at] = value;
  words[at + 1] = value;
  words[at + 2] = value;
  words[at + 3] = value;
}

export function slotMac(key: Uint8Array): SlotMac {
  // RFC 2104: a key longer than the block is hashed first; shorter ones are zero-padded.
  const k = new Uint8Array(64);
  k.set(key.length > 64 ? createHash("sha256").update(key).digest() : key);
  const innerState = compressBlock(
    IV,
    k.map((x) => x ^ 0x36),
  );
  const outerState = compressBlock(
    IV,
    k.map((x) => x ^ 0x5c),
  );

  const inner = new Int32Array(64);
  const outer = new Int32Array(64);
  const v = new Int32Array(8);
  // The inner working variables after the rounds that read only fixed words (0–8).
  const prefixed = new Int32Array(8);
  let lastByte = 0;

  // The padded inner block: message, 0x80, zeros, the bit length of ipad block + message.
  inner[10] = 0; // bytes 40, 41 of the message, 0x80, 0x00: set in setMessage
  inner[15] = (64 + SLOT_MAC_MESSAGE_BYTES) * 8;
  // The padded outer block: the 32-byte inner digest, 0x80, zeros, the bit length 96 bytes.
  outer[8] = 0x80000000 | 0;
  outer[15] = (64 + 32) * 8;

  const mac: SlotMac = {
    setMessage(message) {
      if (message.length !== SLOT_MAC_MESSAGE_BYTES) throw new RangeError("slot MAC messages are 42 bytes");
      for (let i = 0; i < VARYING_WORD; i++) {
        inner[i] =
          (message[4 * i]! << 24) | (message[4 * i + 1]! << 16) | (message[4 * i + 2]! << 8) | message[4 * i + 3]!;
      }
      lastByte = message[39]!;
      inner[10] = (message[40]! << 24) | (message[41]! << 16) | 0x8000;
      prefixed.set(innerState);
      rounds(prefixed, inner, 0, VARYING_WORD);
    },
    tag(varying, out, offset) {
      inner[VARYING_WORD] = (varying << 8) | lastByte;
      expand(inner);
      v.set(prefixed);
      rounds(v, inner, VARYING_WORD, 64);
      for (let i = 0; i < 8; i++) outer[i] = (v[i]! + innerState[i]!) | 0;
      expand(outer);
      v.set(outerState);
      rounds(v, outer, 0, 64);
      for (let i = 0; i < 3; i++) {
        const x = (v[i]! + outerState[i]!) | 0;
        out[offset + 4 * i] = x >>> 24;
        out[offset + 4 * i + 1] = (x >>> 16) & 0xff;
        out[offset + 4 * i + 2] = (x >>> 8) & 0xff;
        out[offset + 4 * i + 3] = x & 0xff;
      }
    },
    tags(varying, count, out, offset, stride) {
      const lanes = slotMacLanes();
      if (!lanes) {
        for (let i = 0; i < count; i++) mac.tag(varying[i]!, out, offset + i * stride);
        return;
      }
      // The module's memory is shared by every signer of this thread: load this key and message.
      const words = lanes.words;
      for (let i = 0; i < 8; i++) {
        splat(words, LAYOUT.PREFIXED / 4 + 4 * i, prefixed[i]!);
        splat(words, LAYOUT.INNER / 4 + 4 * i, innerState[i]!);
        splat(words, LAYOUT.OUTER / 4 + 4 * i, outerState[i]!);
      }
      for (let i = 0; i < 16; i++) splat(words, LAYOUT.FIXED / 4 + 4 * i, inner[i]!);
      const varyingAt = LAYOUT.VARYING / 4;
      const tagsAt = LAYOUT.TAGS / 4;
      for (let done = 0; done < count; done += LANE_BATCH) {
        const n = Math.min(LANE_BATCH, count - done);
        const groups = (n + 3) >>> 2;
        for (let i = 0; i < n; i++) words[varyingAt + i] = (varying[done + i]! << 8) | lastByte;
        for (let i = n; i < groups * 4; i++) words[varyingAt + i] = 0;
        lanes.sign(groups);
        for (let i = 0; i < n; i++) {
          const from = tagsAt + (i >>> 2) * 12 + (i & 3);
          const at = offset + (done + i) * stride;
          for (let j = 0; j < 3; j++) {
            const x = words[from + 4 * j]!;
            out[at + 4 * j] = x >>> 24;
            out[at + 4 * j + 1] = (x >>> 16) & 0xff;
            out[at + 4 * j + 2] = (x >>> 8) & 0xff;
            out[at + 4 * j + 3] = x & 0xff;
          }
        }
      }
    },
  };
  return mac;
}
