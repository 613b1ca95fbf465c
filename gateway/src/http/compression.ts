import compress from "@fastify/compress";
import type { FastifyInstance } from "fastify";

/** Smaller answers are sent as they are: compressing them costs more than it saves. */
const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Brotli or gzip for answers over 1 KB when the client accepts them (availability answers
 * run to megabytes). Only brotli and gzip, so Node 20, 22 and 24 answer alike (zstd is not
 * on Node 20). Request bodies are not decompressed: a compressed body stays what it was
 * before, a JSON parse error. Register it before the routes (it hooks each as it is added).
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    threshold: COMPRESSION_THRESHOLD_BYTES,
    encodings: ["br", "gzip"],
  });
}
