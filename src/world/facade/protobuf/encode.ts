/**
 * A protobuf encoder (proto3 wire format: https://protobuf.dev/programming-guides/encoding/):
 * varint fields (uint64/int64/bool/enum), length-delimited fields (string, bytes,
 * embedded messages). proto3 leaves out fields at their default value (0, "",
 * false); repeated fields are written once per element. The decoder is protobuf.ts.
 */
export class ProtoWriter {
  private readonly parts: Buffer[] = [];

  private varint(v: bigint): void {
    let x = BigInt.asUintN(64, v);
    const bytes: number[] = [];
    do {
      let b = Number(x & 0x7fn);
      x >>= 7n;
      if (x !== 0n) b |= 0x80;
      bytes.push(b);
    } while (x !== 0n);
    this.parts.push(Buffer.from(bytes));
  }

  private tag(no: number, wire: 0 | 2): void {
    this.varint(BigInt((no << 3) | wire));
  }

  /** A uint64 / int64 / enum field (bigint or number); 0 is left out. */
  uint(no: number, v: bigint | number): this {
    const b = typeof v === 'bigint' ? v : BigInt(v);
    if (b === 0n) return this;
    this.tag(no, 0);
    this.varint(b);
    return this;
  }

  bool(no: number, v: boolean): this {
    return v ? this.uint(no, 1n) : this;
  }

  string(no: number, v: string): this {
    return v === '' ? this : this.bytes(no, Buffer.from(v, 'utf8'));
  }

  /** Each element of a repeated string field (empty strings included, as proto3 writes them). */
  strings(no: number, vs: readonly string[]): this {
    for (const v of vs) this.bytes(no, Buffer.from(v, 'utf8'), true);
    return this;
  }

  bytes(no: number, v: Buffer, always = false): this {
    if (v.length === 0 && !always) return this;
    this.tag(no, 2);
    this.varint(BigInt(v.length));
    this.parts.push(v);
    return this;
  }

  /** An embedded message (written even when empty: a set message field is present). */
  message(no: number, m: ProtoWriter): this {
    return this.bytes(no, m.finish(), true);
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}
