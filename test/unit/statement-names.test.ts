// Which statements the embedded engine prepares: those with parameters, from their second run.
import { describe, expect, it } from 'vitest';
import { StatementNames } from '../../src/store/engine.js';

describe('StatementNames', () => {
  it('names a statement with parameters at its second run, and keeps the name', () => {
    const names = new StatementNames();
    const text = 'SELECT content FROM pages WHERE id = ANY($1::bigint[])';
    expect(names.nameOf(text, 1)).toBeUndefined();
    const name = names.nameOf(text, 1);
    expect(name).toMatch(/^folio_\d+$/);
    expect(names.nameOf(text, 1)).toBe(name);
    expect(names.nameOf('SELECT 1 WHERE $1', 1)).toBeUndefined();
    expect(names.nameOf('SELECT 1 WHERE $1', 1)).not.toBe(name);
  });

  it('leaves statements without parameters, long texts and those past the limit unnamed', () => {
    const names = new StatementNames();
    for (let i = 0; i < 3; i++) expect(names.nameOf('BEGIN', 0)).toBeUndefined();
    const long = `INSERT INTO t VALUES ${Array.from({ length: 1000 }, (_, i) => `($${i + 1})`).join(', ')}`;
    for (let i = 0; i < 3; i++) expect(names.nameOf(long, 1000)).toBeUndefined();
    const named = new Set<string>();
    for (let i = 0; i < 300; i++) {
      names.nameOf(`SELECT ${i} WHERE $1`, 1);
      const name = names.nameOf(`SELECT ${i} WHERE $1`, 1);
      if (name) named.add(name);
    }
    expect(named.size).toBe(200);
  });
});
