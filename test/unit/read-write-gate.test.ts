// Searches scan together; applying page changes waits for the scans in flight and holds
// back the ones that arrive meanwhile.
import { describe, expect, it } from 'vitest';
import { ReadWriteGate } from '../../src/search/read-write-gate.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('ReadWriteGate', () => {
  it('runs readers together, a writer after them, and later readers after the writer', async () => {
    const gate = new ReadWriteGate();
    const events: string[] = [];
    let active = 0;
    let most = 0;
    const reader = (name: string) =>
      gate.read(async () => {
        active++;
        most = Math.max(most, active);
        events.push(`${name} start`);
        await tick();
        events.push(`${name} end`);
        active--;
      });
    const first = [reader('r1'), reader('r2')];
    await Promise.resolve();
    const writer = gate.write(() => {
      expect(active).toBe(0);
      events.push('write');
    });
    const late = reader('r3');
    await Promise.all([...first, writer, late]);
    expect(most).toBe(2);
    expect(events.indexOf('write')).toBeGreaterThan(events.indexOf('r1 end'));
    expect(events.indexOf('write')).toBeGreaterThan(events.indexOf('r2 end'));
    expect(events.indexOf('r3 start')).toBeGreaterThan(events.indexOf('write'));
  });

  it('lets readers through after a writer that threw', async () => {
    const gate = new ReadWriteGate();
    await expect(
      gate.write(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(gate.read(async () => 'read')).resolves.toBe('read');
  });
});
