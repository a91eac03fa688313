/**
 * A crowd of hostile client connections for `npm run bench -- servers` (issue 32), run as a child
 * process so that its sockets count against its own file-descriptor limit and its event loop is not
 * the one measuring:
 *
 *   node --import tsx bench/support/socket-crowd.ts <host> <port> <count> <mode> [ca-file]
 *
 * Modes:
 * - `idle`: TCP connections that never send a byte (on a TLS port: never start the handshake);
 * - `tls-idle`: TLS connections that complete the handshake, then send nothing (needs ca-file);
 * - `slowloris`: a request line and one header, then one more header line every 2 s, never ending the headers.
 *
 * The crowd opens its sockets at OPEN_PER_S a second (5,000 take 4 s), then keeps them open: one the
 * server closes is opened again 1 s later, at most REOPEN_PER_S a second. Every second it prints one JSON line on stdout:
 * `{"open": n, "closedByServer": n, "refused": n}` (totals since the start). It runs until killed.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';

const [host = '127.0.0.1', portText = '0', countText = '0', mode = 'idle', caFile] = process.argv.slice(2);
const port = Number(portText);
const count = Number(countText);
if (!(port > 0) || !(count > 0) || !['idle', 'tls-idle', 'slowloris'].includes(mode)) {
  process.stderr.write('usage: socket-crowd.ts <host> <port> <count> idle|tls-idle|slowloris [ca-file]\n');
  process.exit(2);
}
const ca = caFile ? readFileSync(caFile, 'utf8') : undefined;
const REOPEN_DELAY_MS = 1000;
const REOPEN_PER_S = 125;
const OPEN_PER_S = 1250;

let open = 0;
let closedByServer = 0;
let refused = 0;
let pending = 0;
const reopenQueue: number[] = [];

function one(): void {
  pending++;
  let connected = false;
  let trickle: NodeJS.Timeout | undefined;
  const onConnect = () => {
    connected = true;
    pending--;
    open++;
    if (mode === 'slowloris') {
      s.write(`GET /_admin/seed HTTP/1.1\r\nHost: ${host}\r\n`);
      let n = 0;
      trickle = setInterval(() => s.write(`X-Trickle-${n++}: x\r\n`), 2000);
    }
  };
  const s: Socket =
    mode === 'tls-idle' ? tlsConnect({ host, port, ...(ca ? { ca } : {}), servername: 'localhost' }, onConnect) : netConnect({ host, port }, onConnect);
  s.on('error', () => undefined);
  s.on('data', () => undefined);
  s.on('close', () => {
    if (trickle) clearInterval(trickle);
    if (connected) {
      open--;
      closedByServer++;
    } else {
      pending--;
      refused++;
    }
    reopenQueue.push(Date.now() + REOPEN_DELAY_MS);
  });
}

// Fill the crowd, then keep it full.
let started = 0;
const t0 = Date.now();
const filler = setInterval(() => {
  const due = Math.min(count, Math.ceil(((Date.now() - t0) / 1000) * OPEN_PER_S));
  for (; started < due; started++) one();
  if (started >= count) clearInterval(filler);
}, 10);
let budget = REOPEN_PER_S;
setInterval(() => (budget = REOPEN_PER_S), 1000);
setInterval(() => {
  const now = Date.now();
  while (reopenQueue.length > 0 && reopenQueue[0]! <= now && budget > 0) {
    reopenQueue.shift();
    budget--;
    one();
  }
}, 20);
setInterval(() => process.stdout.write(`${JSON.stringify({ open, pending, closedByServer, refused })}\n`), 1000);
