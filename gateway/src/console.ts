import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { problem } from "@platform/kit/problems";
import type { FastifyInstance, FastifyReply } from "fastify";

/** Where the developer console lives; its pages are client-side routes below it. */
export const CONSOLE_PATH = "/console";

/**
 * Headers of every console answer. The page runs only its own script and stylesheet and talks
 * only to this origin (the public API): no inline code, no third party, never in a frame, and
 * no Referer that could carry a console URL elsewhere.
 */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

/** Assets carry a content hash in their name: a new build is a new URL, so they never go stale. */
const IMMUTABLE = "public, max-age=31536000, immutable";
/** The page itself names the current assets: revalidated on every load (cheap: ETag, 304). */
const REVALIDATE = "no-cache";

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/**
 * The console's build output (`npm run build` writes dist/console): CONSOLE_DIR when set, else
 * dist/console beside the bundled gateway (dist/gateway/main.js, dist/embedded/main.js) or in
 * the checkout when the gateway runs from its sources.
 */
export function defaultConsoleDir(): string {
  const candidates = [
    fileURLToPath(new URL("../console/", import.meta.url)),
    fileURLToPath(new URL("../../dist/console/", import.meta.url)),
  ];
  return candidates.find((dir) => existsSync(join(dir, "index.html"))) ?? (candidates[1] as string);
}

/** Every file of the build, read once: the console is a few hundred KB, served from memory. */
function loadAssets(dir: string): Map<string, Asset> | undefined {
  if (!existsSync(join(dir, "index.html"))) return undefined;
  const assets = new Map<string, Asset>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else {
        const body = readFileSync(join(dir, rel));
        const etag = `"${createHash("sha1").update(body).digest("base64url")}"`;
        assets.set(rel, { body, type: TYPES[extname(entry.name)] ?? "application/octet-stream", etag });
      }
    }
  };
  walk("");
  return assets;
}

/** The gateway's conditional GET (http/conditional.ts) answers 304 to a matching If-None-Match. */
function send(reply: FastifyReply, asset: Asset, cacheControl: string) {
  return reply
    .headers(CONSOLE_SECURITY_HEADERS)
    .header("cache-control", cacheControl)
    .header("etag", asset.etag)
    .type(asset.type)
    .send(asset.body);
}

/**
 * GET /console and everything below it: files of the build under /console/assets/, and the page
 * (index.html) for any other path, the console's own routes (/console/events, …). Not part of
 * the API: no key, no rate limit, not in the OpenAPI document. Without a build the page is a 404
 * problem saying how to build it.
 */
export function registerConsole(app: FastifyInstance, opts: { dir: string }): void {
  const assets = loadAssets(opts.dir);
  const hidden = { schema: { hide: true } };
  const page = (reply: FastifyReply) => {
    const index = assets?.get("index.html");
    if (!index) {
      throw problem(
        "not-found",
        `The developer console is not built in ${opts.dir}: run \`npm run build\` (npm start builds it by itself).`,
      );
    }
    return send(reply, index, REVALIDATE);
  };
  app.get(CONSOLE_PATH, hidden, async (_request, reply) => page(reply));
  app.get(`${CONSOLE_PATH}/*`, hidden, async (request, reply) => {
    const rest = (request.params as { "*": string })["*"];
    if (rest.startsWith("assets/")) {
      const asset = assets?.get(rest);
      if (!asset) throw problem("not-found", `The console has no asset ${rest}.`);
      return send(reply, asset, IMMUTABLE);
    }
    return page(reply);
  });
}
