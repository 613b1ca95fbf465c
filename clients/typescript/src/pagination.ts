/** A page of a list operation, as the API returns it. */
export interface PageOf<Item> {
  items: Item[];
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

/**
 * The answer of a list operation. Await it for one page (`const page = await client.deals.list()`),
 * or iterate it for every item of every page, fetched lazily one page at a time
 * (`for await (const deal of client.deals.list({ stage: ["Won"] }))`); `pages()` iterates
 * whole pages. Nothing is sent until it is awaited or iterated; awaiting it twice sends once.
 */
export class PageRequest<Item, Page extends PageOf<Item> = PageOf<Item>>
  implements PromiseLike<Page>, AsyncIterable<Item>
{
  readonly #fetchPage: (cursor: string | undefined) => Promise<Page>;
  readonly #cursor: string | undefined;
  #first: Promise<Page> | undefined;

  /** `fetchPage` sends the list request with this cursor (undefined: the caller's own, for the first page). */
  constructor(fetchPage: (cursor: string | undefined) => Promise<Page>, cursor?: string) {
    this.#fetchPage = fetchPage;
    this.#cursor = cursor;
  }

  #firstPage(): Promise<Page> {
    this.#first ??= this.#fetchPage(this.#cursor);
    return this.#first;
  }

  // A thenable on purpose: `await client.deals.list()` is the first page, while the same value
  // stays iterable (a Promise subclass could not be both lazy and async-iterable this simply).
  // biome-ignore lint/suspicious/noThenProperty: PromiseLike of the first page by design
  then<A = Page, B = never>(
    onFulfilled?: ((page: Page) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#firstPage().then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page | B> {
    return this.#firstPage().catch(onRejected);
  }

  /** Every page, from this request's first, following nextCursor until it is null. */
  async *pages(): AsyncGenerator<Page, void, undefined> {
    let page = await this.#firstPage();
    yield page;
    while (page.nextCursor !== null && page.nextCursor !== undefined && page.nextCursor !== "") {
      page = await this.#fetchPage(page.nextCursor);
      yield page;
    }
  }

  /** Every item of every page, in order. */
  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Collects every item of every page (use with care on large lists). */
  async all(): Promise<Item[]> {
    const items: Item[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
