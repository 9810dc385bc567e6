// The contents of result pages, kept in memory for the next searches that return them. A
// page's content, document and number never change once stored (a new version is a new
// document with new pages, and page ids are not reused), so a kept entry is never stale; a
// deleted page is no longer scored, so its entry is simply not asked for again.
import { LruMap } from '../lru.js';
import type { PageContent } from '../store/pages.js';

/** Characters of content kept (about 2 bytes each at most): a few thousand typical pages. */
const DEFAULT_BUDGET_CHARS = 4_000_000;

export class PageContents {
  private readonly kept: LruMap<number, PageContent>;

  constructor(
    private readonly read: (pageIds: number[]) => Promise<PageContent[]>,
    budgetChars = DEFAULT_BUDGET_CHARS,
  ) {
    this.kept = new LruMap(budgetChars, (page) => page.content.length);
  }

  /** The pages' contents by id; a page missing from the store is missing from the map. */
  async get(pageIds: number[]): Promise<Map<number, PageContent>> {
    const found = new Map<number, PageContent>();
    const missing: number[] = [];
    for (const id of pageIds) {
      const page = this.kept.get(id);
      if (page) found.set(id, page);
      else missing.push(id);
    }
    if (missing.length > 0) {
      for (const page of await this.read(missing)) {
        found.set(page.id, page);
        this.kept.set(page.id, page);
      }
    }
    return found;
  }
}
