// Many readers or one writer: searches scan a workspace's index together, while applying
// page changes waits for the scans in flight and holds back new ones until it is done.

export class ReadWriteGate {
  private readers = 0;
  private drained: (() => void) | null = null;
  private writing: Promise<void> = Promise.resolve();

  async read<T>(fn: () => Promise<T>): Promise<T> {
    await this.writing;
    this.readers++;
    try {
      return await fn();
    } finally {
      if (--this.readers === 0 && this.drained) this.drained();
    }
  }

  /** Runs `fn` once no reader is in flight; readers that arrive meanwhile wait for it. */
  async write(fn: () => void): Promise<void> {
    const previous = this.writing;
    let done!: () => void;
    this.writing = new Promise((resolve) => (done = resolve));
    try {
      await previous;
      if (this.readers > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = null;
      fn();
    } finally {
      done();
    }
  }
}
