#!/usr/bin/env python3
"""raise-day-count.py IN OUT [I]: writes OUT, the bucket file IN (codec null)
with the count of its day record I (default 3, from 0) raised by one: the
day container is read and rewritten by python3-avro, the hourly container
is kept byte for byte.  Prints the record's member_ref and bucket_start
(epoch milliseconds)."""
import io
import sys

import avro.datafile
import avro.io
import avro.schema

b = open(sys.argv[1], "rb").read()
i = int(sys.argv[3]) if len(sys.argv) > 3 else 3
# the day container's header: the last "Obj\x01" before its cnt.rollup entry
at = b.rindex(b"Obj\x01", 0, b.rindex(b"\x14cnt.rollup\x06day"))
days = avro.datafile.DataFileReader(io.BytesIO(b[at:]), avro.io.DatumReader())
assert days.get_meta("cnt.rollup") == b"day"
recs = list(days)
recs[i]["count"] += 1
out = io.BytesIO()
w = avro.datafile.DataFileWriter(out, avro.io.DatumWriter(), avro.schema.parse(days.schema))
w.set_meta("cnt.rollup", b"day")
for r in recs:
    w.append(r)
w.flush()
open(sys.argv[2], "wb").write(b[:at] + out.getvalue())
print(recs[i]["member_ref"], int(recs[i]["bucket_start"].timestamp() * 1000))
