// An exclusive lock on an embedded data directory: PGlite has no guard of its own, and two
// processes writing one data dir corrupt it.
import fs from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock or throws DataDirLockedError; returns the release function. */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'folio.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        fs.rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(fs.readFileSync(file, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
        throw new DataDirLockedError(`data directory ${dir} is in use by process ${holder}`);
      }
      if (holder === process.pid) {
        throw new DataDirLockedError(`data directory ${dir} is already open in this process`);
      }
      // The holder died without releasing: the lock is stale.
      fs.rmSync(file, { force: true });
    }
  }
  throw new DataDirLockedError(`could not lock data directory ${dir}`);
}
