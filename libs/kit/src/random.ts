/**
 * A deterministic pseudo-random source (mulberry32) seeded from a string: the same seed
 * gives the same sequence on every machine, which is what sandbox and generated data need.
 * Not for anything secret.
 */
export function seededRandom(seed: string): () => number {
  let a = 0;
  for (const ch of seed) a = (Math.imul(a, 31) + ch.charCodeAt(0)) | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
