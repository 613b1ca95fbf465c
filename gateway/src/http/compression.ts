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
  // A HEAD route gets fastify's body-dropping hook before the plugin adds its own, so HEAD
  // would announce the identity length while GET sends brotli. Dropping the body last makes
  // HEAD's Content-Encoding and Content-Length those of the GET (RFC 9110 §9.3.2).
  app.addHook("onRoute", (route) => {
    if (route.method !== "HEAD" || !Array.isArray(route.onSend)) return;
    const hooks = route.onSend as { name: string }[];
    const drop = hooks.findIndex((hook) => hook.name === "headRouteOnSendHandler");
    if (drop >= 0 && drop < hooks.length - 1) hooks.push(...hooks.splice(drop, 1));
  });
}
