#!/usr/bin/python3
"""Writes an event container again with Debian's python3-avro, changing
some fields: a container no cnt tool wrote, for the tests of hostile input.

  avro-poke.py IN OUT [--bytes FIELD]... [KEY FIELD EXPR]...

IN is read whole (codec null or deflate) and its records written to OUT
(deflate) under IN's schema.  A FIELD given with --bytes is written as
Avro bytes, which readers take as a string (the Avro specification's
promotion), so that it can hold bytes that are not UTF-8.  In the record
whose idempotency_key is KEY, FIELD becomes the Python expression EXPR of
its old value v (a str): 'v[:8] + "\\0" + v[9:]', 'b"m-\\xff"'.
"""
import json
import sys

import avro.schema
from avro.datafile import DataFileReader, DataFileWriter
from avro.io import DatumReader, DatumWriter

args = sys.argv[1:]
src, dst, args = args[0], args[1], args[2:]
as_bytes = []
while args[:1] == ["--bytes"]:
    as_bytes.append(args[1])
    args = args[2:]
if len(args) % 3:
    sys.exit("avro-poke.py: KEY FIELD EXPR come in threes")
edits = [tuple(args[i:i + 3]) for i in range(0, len(args), 3)]

r = DataFileReader(open(src, "rb"), DatumReader())
sj = json.loads(r.meta["avro.schema"].decode())
for f in sj["fields"]:
    if f["name"] in as_bytes:
        f["type"] = "bytes"
w = DataFileWriter(open(dst, "wb"), DatumWriter(), avro.schema.parse(json.dumps(sj)), codec="deflate")
done = 0
for e in r:
    for key, field, expr in edits:
        if e["idempotency_key"] == key:
            e[field] = eval(expr, {}, {"v": e[field]})
            done += 1
    for field in as_bytes:
        if isinstance(e[field], str):
            e[field] = e[field].encode()
    w.append(e)
w.close()
if done != len(edits):
    sys.exit("avro-poke.py: %d of %d edits found their record" % (done, len(edits)))
