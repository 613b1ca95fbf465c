import { setFlagsFromString } from "node:v8";

/**
 * Imported at the top of the main module of every process of the distributed runtime (the
 * gateway, each service, webhook delivery), before it starts any work: turns off V8's
 * allocation-site pretenuring.
 *
 * V8 follows the objects of each object and array literal by its allocation site, and once most
 * of a site's objects outlived a scavenge it allocates every later one straight in the old
 * generation. A request/response process has short bursts where per-call objects live long (the
 * admin plane issuing tokens, each waiting on a database write; a cold start). The same code
 * then serves the hot reads, and each read's objects, born old, hold their call's context,
 * stream, request and response through every scavenge until a mark-compact. Identity promoted
 * 13–17 % of what it allocated at an even 1,000 req/s once a burst of token writes had come
 * first, 0.3 % when the reads had come first, and 1.6–2.3 % with the flag, whatever came
 * first; its scavenge pauses fell from 520–660 to 210–250 ms over the run (docs/benchmarks/node.md,
 * "Born old").
 *
 * Set here rather than on each image's command line so every way of starting a process gets it
 * (npm run stack, the images, a plain `node dist/<name>/main.js`). Node allows V8 flags to change
 * at run time (it does not freeze them); this one is read at each scavenge. A process started
 * with `--allocation-site-pretenuring` keeps it.
 */
if (!process.execArgv.includes("--allocation-site-pretenuring")) {
  setFlagsFromString("--no-allocation-site-pretenuring");
}
