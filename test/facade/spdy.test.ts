/**
 * SPDY/3.1 framing of the port-forward server (src/world/facade/portforward/spdy-frames.ts) and the
 * etcd member model behind it (src/world/facade/etcd/members.ts); the whole path against
 * client-go and etcd clientv3 is test/facade/etcd-portforward.test.ts (KCP-2).
 */
import { createHash } from 'node:crypto';
import { constants, createDeflate, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { EtcdError, WorkloadEtcd } from '../../src/world/facade/etcd/members.js';
import { SPDY3_DICTIONARY } from '../../src/world/facade/portforward/spdy-dictionary.js';
import { decodeHeaderBlock, encodeHeaderBlock, FLAG_FIN, FrameReader, FrameWriter } from '../../src/world/facade/portforward/spdy-frames.js';
import type { Node } from '../../src/product/api/core.js';

/** Header blocks as a SPDY client compresses them: one zlib stream with the dictionary, a sync flush per block. */
async function clientBlocks(blocks: Buffer[]): Promise<Buffer[]> {
  const z = createDeflate({ dictionary: SPDY3_DICTIONARY });
  const out: Buffer[] = [];
  for (const b of blocks) {
    const chunks: Buffer[] = [];
    const onData = (c: Buffer): number => chunks.push(c);
    z.on('data', onData);
    z.write(b);
    await new Promise<void>((resolve) => z.flush(constants.Z_SYNC_FLUSH, () => resolve()));
    z.off('data', onData);
    out.push(Buffer.concat(chunks));
  }
  z.close();
  return out;
}

function synStream(streamId: number, block: Buffer, flags = 0): Buffer {
  const payload = Buffer.concat([Buffer.alloc(10), block]);
  payload.writeUInt32BE(streamId, 0);
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8003, 0);
  h.writeUInt16BE(1, 2);
  h.writeUInt32BE((flags << 24) | payload.length, 4);
  return Buffer.concat([h, payload]);
}

describe('SPDY/3.1 frames (port-forward server)', () => {
  it('the header dictionary is the SPDY/3 one (§2.6.10.1: 1423 bytes)', () => {
    expect(SPDY3_DICTIONARY.length).toBe(1423);
    expect(createHash('sha256').update(SPDY3_DICTIONARY).digest('hex')).toBe('51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02');
  });

  it('reads SYN_STREAMs whose header blocks share one compression context, split across any chunking', async () => {
    const [a, b] = await clientBlocks([
      encodeHeaderBlock({ streamtype: ['error'], port: ['2379'], requestid: ['0'] }),
      encodeHeaderBlock({ streamtype: ['data'], port: ['2379'], requestid: ['0'] }),
    ]);
    const bytes = Buffer.concat([synStream(1, a!), synStream(3, b!, FLAG_FIN)]);
    const r = new FrameReader();
    const frames = [];
    for (let i = 0; i < bytes.length; i += 3) frames.push(...r.push(bytes.subarray(i, i + 3)));
    expect(frames).toEqual([
      { kind: 'syn_stream', streamId: 1, associatedId: 0, priority: 0, flags: 0, headers: { streamtype: ['error'], port: ['2379'], requestid: ['0'] } },
      { kind: 'syn_stream', streamId: 3, associatedId: 0, priority: 0, flags: FLAG_FIN, headers: { streamtype: ['data'], port: ['2379'], requestid: ['0'] } },
    ]);
  });

  it('writes header blocks any zlib reader inflates as one stream (stored blocks, each ending on the sync-flush marker)', () => {
    const w = new FrameWriter();
    const one = w.synReply(1, { a: ['1'] });
    const two = w.synReply(3, { b: ['2', '3'] });
    const blocks = [one.subarray(12), two.subarray(12)];
    expect(one.readUInt16BE(0)).toBe(0x8003);
    expect(one.readUInt16BE(2)).toBe(2);
    expect(blocks.every((x) => x.subarray(-5).equals(Buffer.from([0, 0, 0, 0xff, 0xff])))).toBe(true);
    const plain = inflateSync(Buffer.concat(blocks), { finishFlush: constants.Z_SYNC_FLUSH });
    const first = encodeHeaderBlock({ a: ['1'] });
    expect(decodeHeaderBlock(plain.subarray(0, first.length))).toEqual({ a: ['1'] });
    expect(decodeHeaderBlock(plain.subarray(first.length))).toEqual({ b: ['2', '3'] });
  });

  it('DATA frames carry the stream id, FIN only on the last, and are read back', () => {
    const w = new FrameWriter();
    const bytes = Buffer.concat([...w.data(3, Buffer.from('hello')), ...w.data(3, Buffer.alloc(0), true), w.ping(7), w.rstStream(3, 5), w.goaway(3, 0)]);
    expect(new FrameReader().push(bytes)).toEqual([
      { kind: 'data', streamId: 3, flags: 0, data: Buffer.from('hello') },
      { kind: 'data', streamId: 3, flags: FLAG_FIN, data: Buffer.alloc(0) },
      { kind: 'ping', id: 7 },
      { kind: 'rst_stream', streamId: 3, status: 5 },
      { kind: 'goaway', lastGoodStreamId: 3, status: 0 },
    ]);
  });

  it('refuses another SPDY version and a header block that does not inflate', () => {
    const h = Buffer.from([0x80, 0x02, 0x00, 0x06, 0, 0, 0, 4, 0, 0, 0, 1]);
    expect(() => new FrameReader().push(h)).toThrow(/SPDY version 2/);
    expect(() => new FrameReader().push(synStream(1, Buffer.from('not zlib')))).toThrow(/does not inflate/);
  });
});

describe('KCP-2: the etcd members of a workload cluster', () => {
  const node = (name: string, created: string, ready = true, uid = `uid-${name}`): Node => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, uid, creationTimestamp: created, labels: { 'node-role.kubernetes.io/control-plane': '' } },
    spec: {},
    status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });

  it('one member per control plane Node in registration order; a replacement Node on the same name is a new member', () => {
    let nodes = [node('cp-b', '2026-01-01T00:00:02Z'), node('cp-a', '2026-01-01T00:00:01Z'), { ...node('w-1', '2026-01-01T00:00:00Z'), metadata: { name: 'w-1', uid: 'w' } }];
    const etcd = new WorkloadEtcd('ns/demo', () => nodes);
    expect(etcd.members().map((m) => m.name)).toEqual(['cp-a', 'cp-b']);
    const a = etcd.memberOn('cp-a')!;
    expect(etcd.leader()).toBe(a.id);
    etcd.remove(a.id);
    expect(etcd.members().map((m) => m.name)).toEqual(['cp-b']);
    nodes = [node('cp-b', '2026-01-01T00:00:02Z'), node('cp-a', '2026-01-01T00:00:03Z', true, 'uid-cp-a-2')];
    expect(etcd.members().map((m) => m.name)).toEqual(['cp-b', 'cp-a']);
    expect(etcd.memberOn('cp-a')!.id).not.toBe(a.id);
  });

  it('MemberRemove keeps quorum, MoveLeader only on the leader and to a reachable member', () => {
    const nodes = [node('cp-1', '2026-01-01T00:00:01Z'), node('cp-2', '2026-01-01T00:00:02Z', false), node('cp-3', '2026-01-01T00:00:03Z')];
    const etcd = new WorkloadEtcd('ns/demo', () => nodes);
    const [m1, m2, m3] = etcd.members();
    expect(() => etcd.moveLeader(m3!.id, m1!.id)).toThrow(EtcdError);
    expect(() => etcd.moveLeader(m1!.id, m2!.id)).toThrow(/not reachable/);
    etcd.moveLeader(m1!.id, m3!.id);
    expect(etcd.leader()).toBe(m3!.id);
    // Removing cp-1 would leave cp-2 (not started) and cp-3: one of two healthy is no quorum.
    expect(() => etcd.remove(m1!.id)).toThrow(/not enough started members/);
    expect(etcd.remove(m2!.id).map((m) => m.name)).toEqual(['cp-1', 'cp-3']);
    expect(() => etcd.remove(m2!.id)).toThrow(/member not found/);
  });
});
