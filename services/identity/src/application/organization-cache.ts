import type { Clock } from "@platform/kit/clock";
import type { OrganizationView, Store } from "../store/index.js";

/** How long a read organization is reused: the bound of what another replica may not see yet. */
export const ORGANIZATION_CACHE_MS = 1_000;

/**
 * GetOrganization is the read behind every `GET /organizations/me` and each deal write's default
 * owner: the organization (joined with its administrator) is reused for a moment instead of
 * read again. Every write this process commits empties the cache, so a PATCH followed by a GET
 * on the same replica always sees its change; another replica's write shows here within `ttlMs`.
 * A read that started before a write is never stored after it.
 */
export function organizationCache(reads: Pick<Store, "findOrganization">, clock: Clock, ttlMs: number) {
  const entries = new Map<string, { value: OrganizationView | undefined; until: number }>();
  let generation = 0;
  return {
    async findOrganization(id: string): Promise<OrganizationView | undefined> {
      const now = clock.now().getTime();
      const hit = entries.get(id);
      if (hit && hit.until > now) return hit.value;
      const started = generation;
      const value = await reads.findOrganization(id);
      // Unknown ids are not kept: they cost a query, but cannot fill the map.
      if (value && started === generation && ttlMs > 0) {
        if (entries.size >= 10_000) entries.clear();
        entries.set(id, { value, until: now + ttlMs });
      }
      return value;
    },
    /** After a committed write: nothing read before it is answered again. */
    clear(): void {
      generation++;
      entries.clear();
    },
  };
}
