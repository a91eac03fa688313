/**
 * One raw exchange over a socket for the HTTP-layer tests of mock-hcs: write `text` once the socket is
 * connected (or nothing, to stay idle), collect every byte until the server closes the connection, and
 * give up after `boundMs` (then `closedByServer` is false). Every wait is bounded.
 */
import type { Socket } from 'node:net';

export interface Exchange {
  out: string;
  closedByServer: boolean;
  ms: number;
}

/** `open(onConnect)` makes the socket (net.connect or tls.connect) and calls onConnect once it is connected. */
export function exchangeUntilClose(open: (onConnect: () => void) => Socket, text: string | undefined, boundMs = 5000): Promise<Exchange> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const s = open(() => {
      if (text !== undefined) s.write(text);
    });
    let out = '';
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ out, closedByServer, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => finish(false), boundMs);
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.on('close', () => finish(true));
    s.on('error', () => finish(true));
  });
}
