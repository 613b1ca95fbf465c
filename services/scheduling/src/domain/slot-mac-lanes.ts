/**
 * The slot MAC's two SHA-256 compressions (slot-mac.ts) for four messages at once, as a
 * WebAssembly SIMD function: each 32-bit word of the state and of the message schedule is an
 * i32x4 vector holding that word of four messages, so one pass of the 64 rounds signs four slots.
 * Scalar JavaScript spends about 0.5 µs a tag; four lanes share the instruction stream.
 *
 * The module is emitted here as bytes (no toolchain, no binary checked in): one exported
 * function, `sign(groups)`, over one exported memory laid out as below. Every value in memory is
 * a native (little-endian) i32; a "splatted" word holds the same value in its four lanes.
 *
 *   PREFIXED   8 splatted words: the inner working variables after rounds 0–8 (fixed words only)
 *   FIXED     16 splatted words: the inner padded block (word 9, the varying one, unused)
 *   INNER      8 splatted words: the key's inner state (ipad block compressed)
 *   OUTER      8 splatted words: the key's outer state (opad block compressed)
 *   VARYING    one i32 per message: the inner block's word 9, four messages per 16 bytes
 *   TAGS       per group of four messages, 3 vectors: tag words 0, 1, 2 of lanes 0–3
 *
 * `sign(groups)` reads VARYING and writes TAGS for `groups` groups of four messages.
 */

import { SHA256_K as K } from "./sha256-constants.js";

/** Messages per `sign` call at most (the memory holds their varying words and tags). */
export const LANE_BATCH = 4096;

/** Byte offsets of the memory's regions. */
export const LAYOUT = {
  PREFIXED: 0,
  FIXED: 128,
  INNER: 384,
  OUTER: 512,
  VARYING: 1024,
  TAGS: 1024 + LANE_BATCH * 4,
} as const;

const PAGES = Math.ceil((LAYOUT.TAGS + (LANE_BATCH / 4) * 48) / 65536);

/** The inner block's word that differs between messages (slot-mac.ts). */
const VARYING_WORD = 9;

// --- a minimal encoder for the instructions the function uses ---

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const simd = (op: number) => [0xfd, ...uleb(op)];
const op = {
  get: (i: number) => [0x20, ...uleb(i)],
  set: (i: number) => [0x21, ...uleb(i)],
  i32: (n: number) => [0x41, ...sleb(n | 0)],
  i32add: [0x6a],
  i32geu: [0x4f],
  load: (offset: number) => [...simd(0x00), 4, ...uleb(offset)],
  store: (offset: number) => [...simd(0x0b), 4, ...uleb(offset)],
  splat: (n: number) => [...simd(0x0c), ...new Uint8Array(Int32Array.of(n, n, n, n).buffer)],
  and: simd(0x4e),
  or: simd(0x50),
  xor: simd(0x51),
  bitselect: simd(0x52),
  shl: simd(0xab),
  shrU: simd(0xad),
  add: simd(0xae),
};

// Locals: the parameter (groups), two i32 (offset into VARYING, offset into TAGS), then v128s.
const GROUPS = 0;
const IN = 1;
const OUT = 2;
const V = 3; // a..h at V..V+7
const W = V + 8; // w[0..15] at W..W+15
const T1 = W + 16;
const T2 = T1 + 1;
const V128_LOCALS = 8 + 16 + 2;

function emitFunction(): number[] {
  const code: number[] = [];
  const emit = (...parts: number[][]) => {
    for (const p of parts) code.push(...p);
  };
  const rotr = (x: number, n: number) => [
    ...op.get(x),
    ...op.i32(n),
    ...op.shrU,
    ...op.get(x),
    ...op.i32(32 - n),
    ...op.shl,
    ...op.or,
  ];
  const shr = (x: number, n: number) => [...op.get(x), ...op.i32(n), ...op.shrU];
  const xor3 = (a: number[], b: number[], c: number[]) => [...a, ...b, ...op.xor, ...c, ...op.xor];
  const w = (t: number) => W + (t & 15);

  /** w[t] for t ≥ 16, in place of w[t − 16]. */
  const schedule = (t: number) =>
    emit(
      op.get(w(t)),
      xor3(rotr(w(t - 15), 7), rotr(w(t - 15), 18), shr(w(t - 15), 3)),
      op.add,
      op.get(w(t - 7)),
      op.add,
      xor3(rotr(w(t - 2), 17), rotr(w(t - 2), 19), shr(w(t - 2), 10)),
      op.add,
      op.set(w(t)),
    );

  /** Rounds from..63 on the working variables in `vars` (locals a..h, renamed each round). */
  const rounds = (from: number, vars: number[]) => {
    for (let t = from; t < 64; t++) {
      if (t >= 16) schedule(t);
      const [a, b, c, d, e, f, g, h] = vars as [number, number, number, number, number, number, number, number];
      // t1 = h + Σ1(e) + Ch(e, f, g) + K[t] + w[t]
      emit(
        op.get(h),
        xor3(rotr(e, 6), rotr(e, 11), rotr(e, 25)),
        op.add,
        op.get(f),
        op.get(g),
        op.get(e),
        op.bitselect,
        op.add,
        op.splat(K[t]!),
        op.add,
        op.get(w(t)),
        op.add,
        op.set(T1),
      );
      // t2 = Σ0(a) + Maj(a, b, c); Maj picks b where a and b agree, c where they differ.
      emit(
        xor3(rotr(a, 2), rotr(a, 13), rotr(a, 22)),
        op.get(c),
        op.get(b),
        op.get(a),
        op.get(b),
        op.xor,
        op.bitselect,
        op.add,
        op.set(T2),
      );
      // e' = d + t1 (into d's local), a' = t1 + t2 (into h's local); the rest shift by renaming.
      emit(op.get(d), op.get(T1), op.add, op.set(d), op.get(T1), op.get(T2), op.add, op.set(h));
      vars.splice(0, 8, h, a, b, c, d, e, f, g);
    }
  };

  const vars = Array.from({ length: 8 }, (_, i) => V + i);
  emit([0x02, 0x40], [0x03, 0x40]); // block, loop
  // while (in < groups * 16)
  emit(op.get(IN), op.get(GROUPS), op.i32(16), [0x6c], op.i32geu, [0x0d, 1]); // i32.mul, br_if 1
  // The inner compression, from the state after the fixed rounds.
  for (let i = 0; i < 8; i++) emit(op.i32(0), op.load(LAYOUT.PREFIXED + 16 * i), op.set(vars[i]!));
  for (let i = 0; i < 16; i++) {
    if (i === VARYING_WORD) emit(op.get(IN), op.load(LAYOUT.VARYING), op.set(W + i));
    else emit(op.i32(0), op.load(LAYOUT.FIXED + 16 * i), op.set(W + i));
  }
  rounds(VARYING_WORD, vars);
  // The outer block: the inner digest (state + working variables), 0x80, zeros, length 768 bits.
  for (let i = 0; i < 8; i++) {
    emit(op.get(vars[i]!), op.i32(0), op.load(LAYOUT.INNER + 16 * i), op.add, op.set(W + i));
  }
  emit(op.splat(0x80000000), op.set(W + 8));
  for (let i = 9; i < 15; i++) emit(op.splat(0), op.set(W + i));
  emit(op.splat((64 + 32) * 8), op.set(W + 15));
  const outer = Array.from({ length: 8 }, (_, i) => V + i);
  for (let i = 0; i < 8; i++) emit(op.i32(0), op.load(LAYOUT.OUTER + 16 * i), op.set(outer[i]!));
  rounds(0, outer);
  // Only the first 3 words of the tag are kept.
  for (let i = 0; i < 3; i++) {
    emit(
      op.get(OUT),
      op.get(outer[i]!),
      op.i32(0),
      op.load(LAYOUT.OUTER + 16 * i),
      op.add,
      op.store(LAYOUT.TAGS + 16 * i),
    );
  }
  emit(op.get(IN), op.i32(16), op.i32add, op.set(IN), op.get(OUT), op.i32(48), op.i32add, op.set(OUT));
  emit([0x0c, 0], [0x0b], [0x0b], [0x0b]); // br 0, end loop, end block, end function
  const locals = [2, ...uleb(2), 0x7f, ...uleb(V128_LOCALS), 0x7b];
  return [...locals, ...code];
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

const name = (s: string) => [...uleb(s.length), ...Buffer.from(s, "utf8")];

/** The module's bytes. */
export function slotMacLanesModule(): Uint8Array {
  const body = emitFunction();
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 1, 0x7f, 0]), // type 0: (i32) -> ()
    ...section(3, [1, 0]), // function 0 of type 0
    ...section(5, [1, 0x00, ...uleb(PAGES)]), // one memory
    ...section(7, [2, ...name("sign"), 0x00, 0, ...name("memory"), 0x02, 0]),
    ...section(10, [1, ...uleb(body.length), ...body]),
  ]);
}

/** The four-lane signer of this thread, or undefined where WebAssembly SIMD is not available. */
export interface Lanes {
  /** Little-endian i32 view of the memory (byte offset / 4). */
  words: Int32Array;
  sign(groups: number): void;
}

// The typings this project compiles with (lib ES2023, @types/node) declare no WebAssembly values.
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let lanes: Lanes | null | undefined;

export function slotMacLanes(): Lanes | undefined {
  if (lanes === undefined) {
    lanes = null;
    try {
      const bytes = slotMacLanesModule();
      if (wasm?.validate(bytes)) {
        const { exports } = new wasm.Instance(new wasm.Module(bytes));
        const memory = exports.memory as { buffer: ArrayBuffer };
        lanes = { words: new Int32Array(memory.buffer), sign: exports.sign as (groups: number) => void };
      }
    } catch {
      // No WebAssembly SIMD here: signing falls back to one tag at a time.
      lanes = null;
    }
  }
  return lanes ?? undefined;
}
