// The contents of result pages, kept in memory for the next searches that return them. A
// page's content, document and number never change once stored (a new version is a new
// document with new pages, and page ids are not reused), so a kept entry is never stale; a
// deleted page is no longer scored, so its entry is simply not asked for again.
import type { PageContent } from '../store/pages.js';

/** Characters of content kept (about 2 bytes each at most): a few thousand typical pages. */
const DEFAULT_BUDGET_CHARS = 4_000_000;

export class PageContents {
  private readonly kept = new Map<number, PageContent>();
  private chars = 0;

  constructor(
    private readonly read: (pageIds: number[]) => Promise<PageContent[]>,
    private readonly budgetChars = DEFAULT_BUDGET_CHARS,
  ) {}

  /** The pages' contents by id; a page missing from the store is missing from the map. */
  async get(pageIds: number[]): Promise<Map<number, PageContent>> {
    const found = new Map<number, PageContent>();
    const missing: number[] = [];
    for (const id of pageIds) {
      const page = this.kept.get(id);
      if (!page) {
        missing.push(id);
        continue;
      }
      // Least recently used first: a hit moves to the back.
      this.kept.delete(id);
      this.kept.set(id, page);
      found.set(id, page);
    }
    if (missing.length > 0) {
      for (const page of await this.read(missing)) {
        found.set(page.id, page);
        this.keep(page);
      }
    }
    return found;
  }

  private keep(page: PageContent): void {
    if (page.content.length > this.budgetChars || this.kept.has(page.id)) return;
    this.kept.set(page.id, page);
    this.chars += page.content.length;
    for (const [id, old] of this.kept) {
      if (this.chars <= this.budgetChars) break;
      this.kept.delete(id);
      this.chars -= old.content.length;
    }
  }
}
