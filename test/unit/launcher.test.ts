// bin/folio, the command npm start and `npx folio` run: it starts dist/main.js with its memory
// settings unless the environment already has them, and passes the arguments through. Run here
// beside a dist/main.js that reports what it was started with, so no build is needed.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// It first makes short-lived garbage, so the young generation grows to its limit.
const REPORT = `let keep = [];
for (let i = 0; i < 2e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 200000) keep = []; }
console.log(JSON.stringify({
  argv: process.argv.slice(2),
  execArgv: process.execArgv,
  arenas: process.env.MALLOC_ARENA_MAX ?? null,
  trim: process.env.MALLOC_TRIM_THRESHOLD_ ?? null,
  newSpace: require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size,
}));`;

interface Started {
  argv: string[];
  execArgv: string[];
  arenas: string | null;
  trim: string | null;
  newSpace: number;
}

describe('bin/folio', () => {
  let dir: string;
  const run = async (command: string, args: string[], env: Record<string, string> = {}): Promise<Started> => {
    const { stdout } = await promisify(execFile)(command, args, { env: { PATH: process.env.PATH, ...env } });
    return JSON.parse(stdout) as Started;
  };

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-launcher-'));
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.mkdirSync(path.join(dir, 'dist'));
    fs.copyFileSync(path.join(ROOT, 'bin/folio'), path.join(dir, 'bin/folio'));
    fs.chmodSync(path.join(dir, 'bin/folio'), 0o755);
    fs.writeFileSync(path.join(dir, 'dist/main.js'), REPORT);
    // As npm links a package's command: a relative symlink in node_modules/.bin.
    fs.mkdirSync(path.join(dir, 'node_modules/.bin'), { recursive: true });
    fs.symlinkSync('../../bin/folio', path.join(dir, 'node_modules/.bin/folio'));
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts dist/main.js with one malloc arena, a fixed trim threshold, a 4 MiB semi-space and gc exposed, passing the arguments through', async () => {
    const started = await run(path.join(dir, 'bin/folio'), ['keys', 'create', '--label', 'two words', '']);
    expect(started.argv).toEqual(['keys', 'create', '--label', 'two words', '']);
    expect(started).toMatchObject({ arenas: '1', trim: '131072', execArgv: ['--max-semi-space-size=4', '--expose-gc'] });
    // V8 took the flag: the young generation is two 4 MiB semi-spaces at most (32 MiB by default).
    expect(started.newSpace).toBeLessThanOrEqual(8 * 2 ** 20);
  });

  it('keeps the settings the environment already has', async () => {
    const started = await run(path.join(dir, 'bin/folio'), ['serve'], {
      MALLOC_ARENA_MAX: '4',
      MALLOC_TRIM_THRESHOLD_: '1048576',
      NODE_OPTIONS: '--max-semi-space-size=16',
    });
    expect(started).toMatchObject({ argv: ['serve'], arenas: '4', trim: '1048576', execArgv: ['--expose-gc'] });
    expect(started.newSpace).toBeGreaterThan(8 * 2 ** 20);
  });

  it('adds the flags in FOLIO_NODE_FLAGS to node\'s command line', async () => {
    const started = await run(path.join(dir, 'bin/folio'), ['serve'], { FOLIO_NODE_FLAGS: '--stack-size=2000 --no-warnings' });
    expect(started.execArgv).toEqual(['--max-semi-space-size=4', '--expose-gc', '--stack-size=2000', '--no-warnings']);
  });

  it('finds dist/ when run through the symlink npm makes', async () => {
    const started = await run(path.join(dir, 'node_modules/.bin/folio'), ['--version']);
    expect(started).toMatchObject({ argv: ['--version'], arenas: '1' });
  });
});
