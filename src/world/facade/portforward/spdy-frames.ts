/**
 * SPDY/3.1 framing (SPDY Protocol draft 3.1, §2.2 "Framing", §2.6 "Control
 * frames"), as much as a server of Kubernetes' port-forward streams needs
 * (client-go transport/spdy over github.com/moby/spdystream).
 *
 * Control frame: 1 bit control (1), 15 bits version (3), 16 bits type, 8 bits
 * flags, 24 bits length, then the payload. Data frame: 1 bit control (0), 31
 * bits stream id, 8 bits flags, 24 bits length, then the data.
 *
 * Header blocks (§2.6.10): a 32-bit count, then per pair a 32-bit length and
 * the name, a 32-bit length and the value (several values NUL-separated), all
 * compressed with zlib, one compression context per direction for the whole
 * connection, each frame's block ending on a sync flush. Received blocks are
 * inflated with the SPDY/3 dictionary (spdy-dictionary.ts). Sent blocks are
 * written as zlib "stored" (uncompressed) deflate blocks (RFC 1950 header
 * without FDICT, then RFC 1951 §3.2.4 BTYPE 00 blocks): a valid zlib stream
 * every reader accepts, needing no compression state, and byte-for-byte
 * deterministic. Header blocks here are a few bytes, so nothing is lost.
 */
import { constants, inflateSync } from 'node:zlib';
import { SPDY3_DICTIONARY } from './spdy-dictionary.js';

export const SPDY_VERSION = 3;
export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** Control frame types (§2.6). */
export const TYPE = { SYN_STREAM: 1, SYN_REPLY: 2, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, HEADERS: 8, WINDOW_UPDATE: 9 } as const;
/** RST_STREAM status codes (§2.6.3). */
export const RST = { PROTOCOL_ERROR: 1, INVALID_STREAM: 2, REFUSED_STREAM: 3, CANCEL: 5, INTERNAL_ERROR: 6, STREAM_IN_USE: 8, STREAM_ALREADY_CLOSED: 9 } as const;
/** GOAWAY status codes (§2.6.6). */
export const GOAWAY = { OK: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2 } as const;

/** Header names are lowercase on the wire (§2.6.10); several values of one name are NUL-joined. */
export type Headers = Record<string, string[]>;

export type Frame =
  | { kind: 'syn_stream'; streamId: number; associatedId: number; priority: number; flags: number; headers: Headers }
  | { kind: 'syn_reply'; streamId: number; flags: number; headers: Headers }
  | { kind: 'headers'; streamId: number; flags: number; headers: Headers }
  | { kind: 'rst_stream'; streamId: number; status: number }
  | { kind: 'settings'; flags: number; entries: { flags: number; id: number; value: number }[] }
  | { kind: 'ping'; id: number }
  | { kind: 'goaway'; lastGoodStreamId: number; status: number }
  | { kind: 'window_update'; streamId: number; delta: number }
  | { kind: 'data'; streamId: number; flags: number; data: Buffer }
  | { kind: 'unknown'; type: number; flags: number };

export class SpdyProtocolError extends Error {}

/** Largest payload a frame's 24-bit length allows. */
export const MAX_FRAME_PAYLOAD = 0xffffff;
/** Inflated header bytes one connection may send in all (a port-forward opens two streams per connection). */
const MAX_HEADER_BYTES = 1 << 20;

/** The receiving side of one connection's header compression context. */
class HeaderInflater {
  private compressed: Buffer[] = [];
  private compressedLength = 0;
  private produced = 0;

  /**
   * The next block's plain bytes. zlib keeps one context per connection; Node's
   * synchronous inflate has none across calls, so the whole compressed stream so
   * far is inflated again and the new suffix taken (the stream is a few hundred
   * bytes per connection, bounded by MAX_HEADER_BYTES).
   */
  next(block: Buffer): Buffer {
    this.compressed.push(block);
    this.compressedLength += block.length;
    if (this.compressedLength > MAX_HEADER_BYTES) throw new SpdyProtocolError('header blocks exceed 1 MiB on this connection');
    let all: Buffer;
    try {
      all = inflateSync(Buffer.concat(this.compressed), { dictionary: SPDY3_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
    } catch (e) {
      throw new SpdyProtocolError(`header block does not inflate: ${(e as Error).message}`);
    }
    const out = all.subarray(this.produced);
    this.produced = all.length;
    return out;
  }
}

/** The sending side: a zlib header once, then one stored block per header block. */
class HeaderDeflater {
  private started = false;
  next(plain: Buffer): Buffer {
    const parts: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      parts.push(Buffer.from([0x78, 0x01])); // CM 8 (deflate), 32 KiB window, no FDICT; (0x78 * 256 + 0x01) % 31 === 0
    }
    for (let off = 0; off < plain.length; off += 0xffff) parts.push(storedBlock(plain.subarray(off, off + 0xffff)));
    // Then an empty stored block, the sync-flush marker (00 00 00 ff ff) a zlib Z_SYNC_FLUSH ends on: Go's
    // compress/flate hands out a stored block's bytes only at the next block boundary, so without the marker
    // it would read on into the next frame (at the end of this frame's bytes: an unexpected EOF that sticks).
    parts.push(storedBlock(Buffer.alloc(0)));
    return Buffer.concat(parts);
  }
}

/** RFC 1951 §3.2.4: BFINAL 0, BTYPE 00 (stored), padded to the byte; LEN and NLEN little-endian; the bytes. */
function storedBlock(chunk: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt16LE(chunk.length, 1);
  head.writeUInt16LE(~chunk.length & 0xffff, 3);
  return Buffer.concat([head, chunk]);
}

export function encodeHeaderBlock(headers: Headers): Buffer {
  const names = Object.keys(headers);
  const parts: Buffer[] = [u32(names.length)];
  for (const name of names) {
    const n = Buffer.from(name.toLowerCase());
    const v = Buffer.from((headers[name] ?? []).join('\0'));
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(plain: Buffer): Headers {
  const out: Headers = {};
  let pos = 0;
  const need = (n: number): void => {
    if (pos + n > plain.length) throw new SpdyProtocolError('truncated header block');
  };
  need(4);
  const count = plain.readUInt32BE(pos);
  pos += 4;
  for (let i = 0; i < count; i++) {
    need(4);
    const nl = plain.readUInt32BE(pos);
    pos += 4;
    need(nl);
    const name = plain.subarray(pos, pos + nl).toString('utf8').toLowerCase();
    pos += nl;
    need(4);
    const vl = plain.readUInt32BE(pos);
    pos += 4;
    need(vl);
    const value = plain.subarray(pos, pos + vl).toString('utf8');
    pos += vl;
    if (name === '') throw new SpdyProtocolError('empty header name');
    (out[name] ??= []).push(...value.split('\0'));
  }
  return out;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function control(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_FRAME_PAYLOAD) throw new SpdyProtocolError(`control frame payload of ${payload.length} bytes`);
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([h, payload]);
}

/** Writes one connection's frames (owns the sending header context). */
export class FrameWriter {
  private readonly deflater = new HeaderDeflater();

  /** SYN_STREAM (§2.6.1): what a client opens a stream with (the port-forward server only receives it; test clients send it). */
  synStream(streamId: number, headers: Headers, flags = 0): Buffer {
    return control(TYPE.SYN_STREAM, flags, Buffer.concat([u32(streamId & 0x7fffffff), u32(0), Buffer.alloc(2), this.deflater.next(encodeHeaderBlock(headers))]));
  }

  synReply(streamId: number, headers: Headers, flags = 0): Buffer {
    return control(TYPE.SYN_REPLY, flags, Buffer.concat([u32(streamId & 0x7fffffff), this.deflater.next(encodeHeaderBlock(headers))]));
  }

  rstStream(streamId: number, status: number): Buffer {
    return control(TYPE.RST_STREAM, 0, Buffer.concat([u32(streamId & 0x7fffffff), u32(status)]));
  }

  ping(id: number): Buffer {
    return control(TYPE.PING, 0, u32(id));
  }

  goaway(lastGoodStreamId: number, status: number): Buffer {
    return control(TYPE.GOAWAY, 0, Buffer.concat([u32(lastGoodStreamId & 0x7fffffff), u32(status)]));
  }

  /** DATA frames for `data` (split at MAX_FRAME_PAYLOAD); FIN on the last when `fin`. An empty `data` with `fin` is one empty FIN frame. */
  data(streamId: number, data: Buffer, fin = false): Buffer[] {
    const out: Buffer[] = [];
    let off = 0;
    do {
      const chunk = data.subarray(off, off + MAX_FRAME_PAYLOAD);
      off += chunk.length;
      const last = off >= data.length;
      const h = Buffer.alloc(8);
      h.writeUInt32BE(streamId & 0x7fffffff, 0);
      h.writeUInt32BE((((last && fin ? FLAG_FIN : 0) & 0xff) << 24) | chunk.length, 4);
      out.push(h, chunk);
    } while (off < data.length);
    return out;
  }
}

/** Reads one connection's frames from its byte stream (owns the receiving header context). */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  private readonly inflater = new HeaderInflater();

  /** The whole frames `chunk` completes, in order; a partial frame waits for more bytes. */
  push(chunk: Buffer): Frame[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const frames: Frame[] = [];
    while (this.buf.length >= 8) {
      const length = this.buf.readUInt32BE(4) & 0xffffff;
      if (this.buf.length < 8 + length) break;
      const head = this.buf.subarray(0, 8);
      const payload = this.buf.subarray(8, 8 + length);
      this.buf = this.buf.subarray(8 + length);
      frames.push(this.parse(head, payload));
    }
    return frames;
  }

  private parse(head: Buffer, p: Buffer): Frame {
    const flags = head[4]!;
    if ((head[0]! & 0x80) === 0) return { kind: 'data', streamId: head.readUInt32BE(0) & 0x7fffffff, flags, data: Buffer.from(p) };
    const version = head.readUInt16BE(0) & 0x7fff;
    if (version !== SPDY_VERSION) throw new SpdyProtocolError(`SPDY version ${version}, this server speaks 3.1`);
    const type = head.readUInt16BE(2);
    const need = (n: number): void => {
      if (p.length < n) throw new SpdyProtocolError(`control frame type ${type} of ${p.length} bytes, needs ${n}`);
    };
    switch (type) {
      case TYPE.SYN_STREAM:
        need(10);
        return { kind: 'syn_stream', streamId: p.readUInt32BE(0) & 0x7fffffff, associatedId: p.readUInt32BE(4) & 0x7fffffff, priority: p[8]! >> 5, flags, headers: decodeHeaderBlock(this.inflater.next(p.subarray(10))) };
      case TYPE.SYN_REPLY:
        need(4);
        return { kind: 'syn_reply', streamId: p.readUInt32BE(0) & 0x7fffffff, flags, headers: decodeHeaderBlock(this.inflater.next(p.subarray(4))) };
      case TYPE.HEADERS:
        need(4);
        return { kind: 'headers', streamId: p.readUInt32BE(0) & 0x7fffffff, flags, headers: decodeHeaderBlock(this.inflater.next(p.subarray(4))) };
      case TYPE.RST_STREAM:
        need(8);
        return { kind: 'rst_stream', streamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
      case TYPE.SETTINGS: {
        need(4);
        const n = p.readUInt32BE(0);
        need(4 + n * 8);
        const entries = [];
        for (let i = 0; i < n; i++) {
          const w = p.readUInt32BE(4 + i * 8);
          entries.push({ flags: w >>> 24, id: w & 0xffffff, value: p.readUInt32BE(8 + i * 8) });
        }
        return { kind: 'settings', flags, entries };
      }
      case TYPE.PING:
        need(4);
        return { kind: 'ping', id: p.readUInt32BE(0) };
      case TYPE.GOAWAY:
        need(8);
        return { kind: 'goaway', lastGoodStreamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
      case TYPE.WINDOW_UPDATE:
        need(8);
        return { kind: 'window_update', streamId: p.readUInt32BE(0) & 0x7fffffff, delta: p.readUInt32BE(4) & 0x7fffffff };
      default:
        return { kind: 'unknown', type, flags };
    }
  }
}
