// Loaded with `node --import` into a tool the tests run (the OpenAPI linter): every socket
// it opens fails at once, and a line on stderr names where it was going, so a test can
// assert the tool never tried the network. Plain JavaScript: it runs before any loader.
import net from 'node:net';
import process from 'node:process';

export const MARKER = 'folio-test: network refused';

net.Socket.prototype.connect = function refuse(...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const target = typeof first === 'object' && first !== null ? `${first.host ?? first.path ?? '?'}:${first.port ?? ''}` : String(first);
  process.stderr.write(`${MARKER}: ${target}\n`);
  process.nextTick(() => this.destroy(new Error(`${MARKER}: ${target}`)));
  return this;
};
