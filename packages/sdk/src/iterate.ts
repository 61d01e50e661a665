/** Walks a keyset-paginated list, following `next_cursor` until `has_more` is false. */
export async function* walkPages<Item, Page extends { next_cursor: string | null; has_more: boolean }>(
  fetchPage: (cursor: string | undefined) => Promise<Page>,
  itemsOf: (page: Page) => Item[],
  firstCursor?: string,
): AsyncGenerator<Item> {
  let cursor = firstCursor;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* itemsOf(page);
    if (!page.has_more || !page.next_cursor) return;
    cursor = page.next_cursor;
  }
}
