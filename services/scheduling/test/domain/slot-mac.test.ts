import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SLOT_MAC_MESSAGE_BYTES, slotMac } from "../../src/domain/slot-mac.js";
import { LANE_BATCH, slotMacLanes } from "../../src/domain/slot-mac-lanes.js";

/** node:crypto's HMAC-SHA256 of `message`, truncated to the 12 bytes slotMac writes. */
function reference(key: Uint8Array, message: Uint8Array): Buffer {
  return createHmac("sha256", key).update(message).digest().subarray(0, 12);
}

function withVarying(message: Uint8Array, varying: number): Uint8Array {
  const m = Uint8Array.from(message);
  m[36] = varying >>> 16;
  m[37] = (varying >>> 8) & 0xff;
  m[38] = varying & 0xff;
  return m;
}

describe("slotMac", () => {
  it("writes the HMAC-SHA256 tags node:crypto computes, for every varying value and fixed message", () => {
    for (const keyLength of [1, 32, 64, 65, 100]) {
      const key = randomBytes(keyLength);
      const mac = slotMac(key);
      for (let m = 0; m < 5; m++) {
        const message = randomBytes(SLOT_MAC_MESSAGE_BYTES);
        mac.setMessage(message);
        for (const varying of [0, 1, 0xff, 0x1234, 0xabcdef, 0xffffff, randomBytes(3).readUIntBE(0, 3)]) {
          const out = Buffer.alloc(20);
          mac.tag(varying, out, 4);
          expect(out.subarray(4, 16)).toEqual(reference(key, withVarying(message, varying)));
          expect(out.subarray(0, 4)).toEqual(Buffer.alloc(4));
          expect(out.subarray(16)).toEqual(Buffer.alloc(4));
        }
      }
    }
  });

  it("ignores bytes 36-38 of the fixed message and keeps byte 39", () => {
    const key = randomBytes(32);
    const mac = slotMac(key);
    const message = randomBytes(SLOT_MAC_MESSAGE_BYTES);
    mac.setMessage(message);
    const a = Buffer.alloc(12);
    mac.tag(42, a, 0);
    const other = Uint8Array.from(message);
    other[36] = other[36]! ^ 0xff;
    mac.setMessage(other);
    const b = Buffer.alloc(12);
    mac.tag(42, b, 0);
    expect(b).toEqual(a);
    other[39] = other[39]! ^ 1;
    mac.setMessage(other);
    const c = Buffer.alloc(12);
    mac.tag(42, c, 0);
    expect(c).not.toEqual(a);
    expect(c).toEqual(reference(key, withVarying(other, 42)));
  });

  it("signs four messages at a time with WebAssembly SIMD on the Node versions we support", () => {
    // Node 22 and 24 (and 20) run WebAssembly SIMD: without it signing falls back to one tag at a time.
    expect(slotMacLanes()).toBeDefined();
  });

  it("tags() writes what tag() writes, for any count, offset and stride, across batches and keys", () => {
    const counts = [1, 2, 3, 4, 5, 7, 64, LANE_BATCH - 1, LANE_BATCH, LANE_BATCH + 5];
    for (const [k, count] of counts.entries()) {
      // Two signers in turn: the lanes' memory is shared, so each call must load its own key.
      const keys = [randomBytes(32), randomBytes(k % 2 ? 70 : 16)];
      for (const key of keys) {
        const mac = slotMac(key);
        const message = randomBytes(SLOT_MAC_MESSAGE_BYTES);
        mac.setMessage(message);
        const varying = Array.from({ length: count }, () => randomBytes(3).readUIntBE(0, 3));
        const stride = 18;
        const out = Buffer.alloc(5 + count * stride);
        mac.tags(varying, count, out, 5, stride);
        const expected = Buffer.alloc(out.length);
        for (let i = 0; i < count; i++) mac.tag(varying[i]!, expected, 5 + i * stride);
        expect(out).toEqual(expected);
        // And against node:crypto, on a sample.
        for (const i of [0, count - 1, count >> 1]) {
          expect(out.subarray(5 + i * stride, 17 + i * stride)).toEqual(
            reference(key, withVarying(message, varying[i]!)),
          );
        }
      }
    }
  });

  it("refuses messages of another length", () => {
    expect(() => slotMac(randomBytes(32)).setMessage(new Uint8Array(41))).toThrow(RangeError);
  });
});
