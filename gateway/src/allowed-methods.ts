import FindMyWay, { type HTTPMethod } from "find-my-way";

/**
 * Every route pattern of the app in a router of its own, so a request fastify found no
 * route for can be told apart: an unknown path (404) or a known path with another method
 * (405 with Allow).
 */
export class AllowedMethods {
  readonly #router = FindMyWay();
  readonly #methods = new Set<HTTPMethod>();

  add(methods: string | string[], url: string): void {
    for (const method of typeof methods === "string" ? [methods] : methods) {
      this.#router.on(method as HTTPMethod, url, () => {});
      this.#methods.add(method as HTTPMethod);
    }
  }

  /** The methods some route serves at this path (without query string); empty when none. */
  at(path: string): string[] {
    return [...this.#methods].filter((m) => this.#router.find(m, path) !== null).sort();
  }
}
