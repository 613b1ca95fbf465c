import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SLOT_MAC_MESSAGE_BYTES, slotMac } from "../../src/domain/slot-mac.js";

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

  it("refuses messages of another length", () => {
    expect(() => slotMac(randomBytes(32)).setMessage(new Uint8Array(41))).toThrow(RangeError);
  });
});
