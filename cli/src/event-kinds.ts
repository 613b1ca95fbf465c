import { WEBHOOK_EVENT_CATALOG } from "@platform/contracts/webhooks";
import leven from "leven";
import { ApiError } from "./api-client.js";

// `--events` checked before anything is sent: a typo names the kind it most likely meant and
// lists them all, instead of the stream's generic 400.

/** The catalog's kind closest to `typed` by edit distance, when close enough to be a typo. */
export function nearestKind(typed: string): string | undefined {
  let best: { kind: string; distance: number } | undefined;
  for (const kind of WEBHOOK_EVENT_CATALOG) {
    const distance = leven(typed, kind);
    if (!best || distance < best.distance) best = { kind, distance };
  }
  // More than a third of the name changed is another word, not a typo.
  return best && best.distance <= Math.max(2, Math.floor(typed.length / 3)) ? best.kind : undefined;
}

/** Splits `--events` and checks every kind against the catalog; throws ApiError naming the first unknown one. */
export function parseEventKinds(raw: string | undefined): string[] {
  const kinds = (raw ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  const known: readonly string[] = WEBHOOK_EVENT_CATALOG;
  for (const kind of kinds) {
    if (known.includes(kind)) continue;
    const nearest = nearestKind(kind);
    throw new ApiError(
      `--events: '${kind}' is not an event kind${nearest ? `; did you mean ${nearest}?` : ""} ` +
        `The kinds: ${known.join(", ")}`,
    );
  }
  return kinds;
}
