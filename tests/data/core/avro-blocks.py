#!/usr/bin/python3
"""Splits an Avro object container file into its parts, independently of
cnt's reader (the Avro 1.11 specification, "Object Container Files").

  avro-blocks.py list FILE        one line per block: offset count size
  avro-blocks.py cut FILE N OUT   writes FILE's first N bytes-exact blocks
                                  (the header and blocks 1..N) to OUT
  avro-blocks.py meta FILE        the header's metadata keys, one a line
  avro-blocks.py zstd FILE OUT    FILE (one container, codec null) written
                                  again with codec zstandard, its record
                                  bytes as they are (damage included),
                                  compressed by python3-zstandard
"""
import sys


def read_long(b, i):
    shift = n = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return (n >> 1) ^ -(n & 1), i


def write_long(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def parse(b):
    assert b[:4] == b"Obj\x01", "not an Avro container"
    i, meta = 4, []
    while True:
        count, i = read_long(b, i)
        if count == 0:
            break
        if count < 0:
            _, i = read_long(b, i)
            count = -count
        for _ in range(count):
            kl, i = read_long(b, i)
            key = b[i:i + kl].decode()
            i += kl
            vl, i = read_long(b, i)
            meta.append((key, b[i:i + vl]))
            i += vl
    sync = b[i:i + 16]
    i += 16
    blocks = []
    while i < len(b):
        at = i
        count, i = read_long(b, i)
        size, i = read_long(b, i)
        i += size
        assert b[i:i + 16] == sync, "block %d: no sync marker" % len(blocks)
        i += 16
        blocks.append((at, count, size, i))
    return meta, blocks


def main():
    b = open(sys.argv[2], "rb").read()
    meta, blocks = parse(b)
    if sys.argv[1] == "list":
        for at, count, size, _ in blocks:
            print(at, count, size)
    elif sys.argv[1] == "meta":
        print("\n".join(k for k, _ in meta))
    elif sys.argv[1] == "zstd":
        import zstandard
        vals = dict(meta)
        assert vals.get("avro.codec", b"null") == b"null", "not codec null"
        vals["avro.codec"] = b"zstandard"
        out = bytearray(b"Obj\x01") + write_long(len(vals))
        for k, v in vals.items():
            out += write_long(len(k)) + k.encode() + write_long(len(v)) + v
        out += write_long(0)
        hdr_end = blocks[0][0] if blocks else len(b)
        out += b[hdr_end - 16:hdr_end]
        for at, count, size, end in blocks:
            payload = b[end - 16 - size:end - 16]
            z = zstandard.ZstdCompressor().compress(payload) if size else b""
            out += write_long(count) + write_long(len(z)) + z + b[end - 16:end]
        open(sys.argv[3], "wb").write(out)
    elif sys.argv[1] == "cut":
        n = int(sys.argv[3])
        end = blocks[n - 1][3] if n > 0 else (blocks[0][0] if blocks else len(b))
        open(sys.argv[4], "wb").write(b[:end])


main()
