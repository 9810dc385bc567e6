// Result pages' contents are read from the store once, then served from memory within a
// character budget, least recently used out first; pages the store lacks stay missing.
import { describe, expect, it } from 'vitest';
import { PageContents } from '../../src/search/page-contents.js';
import type { PageContent } from '../../src/store/pages.js';

const page = (id: number, chars = 10): PageContent => ({ id, document_id: id * 100, page_number: 1, content: String(id % 10).repeat(chars) });

function store(pages: PageContent[]) {
  const reads: number[][] = [];
  const byId = new Map(pages.map((p) => [p.id, p]));
  const read = async (ids: number[]) => {
    reads.push(ids);
    return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  };
  return { reads, read };
}

describe('PageContents', () => {
  it('reads only the pages it does not hold, and gives the store’s contents', async () => {
    const s = store([page(1), page(2), page(3)]);
    const contents = new PageContents(s.read);
    expect([...(await contents.get([1, 2]))]).toEqual([
      [1, page(1)],
      [2, page(2)],
    ]);
    const again = await contents.get([2, 3, 9]);
    expect([...again.keys()].sort()).toEqual([2, 3]);
    expect(again.get(3)).toEqual(page(3));
    expect(s.reads).toEqual([[1, 2], [3, 9]]);
    await contents.get([1, 2, 3]);
    expect(s.reads).toHaveLength(2);
  });

  it('keeps within its budget, dropping the least recently used first', async () => {
    const s = store([page(1, 40), page(2, 40), page(3, 40), page(4, 500)]);
    const contents = new PageContents(s.read, 100);
    await contents.get([1]);
    await contents.get([2]);
    await contents.get([1]); // 1 is now the most recently used
    await contents.get([3]); // 120 characters: 2 goes
    s.reads.length = 0;
    await contents.get([1, 3]);
    expect(s.reads).toEqual([]);
    await contents.get([2]);
    expect(s.reads).toEqual([[2]]);
    // A page larger than the budget is served but not kept.
    await contents.get([4]);
    await contents.get([4]);
    expect(s.reads.slice(1)).toEqual([[4], [4]]);
  });
});
