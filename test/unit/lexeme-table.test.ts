// The keyword index's lexeme table: ids found from any stretch of text, through growth and
// after lexemes are dropped.
import { describe, expect, it } from 'vitest';
import { LexemeTable } from '../../src/search/lexeme-table.js';

describe('LexemeTable', () => {
  it('numbers lexemes as they arrive and finds them from a stretch of any text', () => {
    const table = new LexemeTable();
    expect(table.obtain('fox')).toBe(0);
    expect(table.obtain("'dog':1 'fox':2", 1, 4)).toBe(1);
    expect(table.find('dog')).toBe(1);
    expect(table.find('the fox jumps', 4, 7)).toBe(0);
    expect(table.find('the fox jumps', 4, 6)).toBe(-1);
    expect(table.find('cat')).toBe(-1);
    expect(table.obtain('fox')).toBe(0);
    expect(table.size).toBe(2);
  });

  it('holds thousands of lexemes, long and non-ASCII ones among them, as it grows', () => {
    const table = new LexemeTable();
    const lexemes = Array.from({ length: 6000 }, (_, i) => [`w${i}`, `naïve${i}`, `日本語のテキスト${i}`, `${'x'.repeat(40)}${i}`][i % 4]);
    lexemes.forEach((lexeme, id) => expect(table.obtain(lexeme)).toBe(id));
    expect(table.size).toBe(6000);
    lexemes.forEach((lexeme, id) => expect(table.find(`[${lexeme}]`, 1, lexeme.length + 1)).toBe(id));
    expect(table.find('w6000')).toBe(-1);
    expect(table.byteLength()).toBeGreaterThan(6000 * 4);
  });

  it('finds an ASCII lexeme from its bytes as from its text, through growth', () => {
    const table = new LexemeTable();
    const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => `lexeme${i}`).join(' '), 'latin1');
    let start = 0;
    for (let i = 0; i < 5000; i++) {
      const end = bytes.indexOf(0x20, start) === -1 ? bytes.length : bytes.indexOf(0x20, start);
      // Every other lexeme first arrives as text: the other way finds the same id.
      const id = i % 2 === 0 ? table.obtain(`lexeme${i}`) : table.obtainAscii(bytes, start, end);
      expect(i % 2 === 0 ? table.obtainAscii(bytes, start, end) : table.obtain(`lexeme${i}`)).toBe(id);
      expect(id).toBe(i);
      start = end + 1;
    }
    expect(table.size).toBe(5000);
    expect(table.find('lexeme4999')).toBe(4999);
    expect(table.obtainAscii(Buffer.from('xlexeme7x'), 1, 8)).toBe(7);
    expect(table.obtainAscii(Buffer.from('lexeme'), 0, 6)).toBe(5000);
  });

  it('keeps the lexemes retain() lists, numbered in that order', () => {
    const table = new LexemeTable();
    for (const lexeme of ['a', 'b', 'c', 'd']) table.obtain(lexeme);
    table.retain([3, 1]);
    expect(table.size).toBe(2);
    expect([table.find('d'), table.find('b'), table.find('a'), table.find('c')]).toEqual([0, 1, -1, -1]);
    expect(table.obtain('a')).toBe(2);
    expect(table.obtain('d')).toBe(0);
  });
});
