#!/usr/bin/python3
"""Splits an Avro object container file into its parts, independently of
cnt's reader (the Avro 1.11 specification, "Object Container Files").

  avro-blocks.py list FILE        one line per block: offset count size
  avro-blocks.py cut FILE N OUT   writes FILE's first N bytes-exact blocks
                                  (the header and blocks 1..N) to OUT
  avro-blocks.py meta FILE        the header's metadata keys, one a line
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
            meta.append(key)
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
        print("\n".join(meta))
    elif sys.argv[1] == "cut":
        n = int(sys.argv[3])
        end = blocks[n - 1][3] if n > 0 else (blocks[0][0] if blocks else len(b))
        open(sys.argv[4], "wb").write(b[:end])


main()
