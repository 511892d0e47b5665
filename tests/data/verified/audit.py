#!/usr/bin/python3
"""audit.py LEDGER TENANT COUNTER THROUGH_MS [RETRACTION_ID]: appends one
audit line to the audit ledger LEDGER (cnt-audit(5), lib/correct/auditlog.h)
as cnt-audit writes it: the fields in order, "prev" the XXH3-128 of the
previous line (32 zeros first), through given in epoch ms.  The hash comes
from libxxhash itself (ctypes), so the chain is the one the C reader checks.
For tests/verified.bats, which runs before cnt-audit exists on this branch."""
import ctypes, datetime, json, os, sys

class H128(ctypes.Structure):
    _fields_ = [("low64", ctypes.c_uint64), ("high64", ctypes.c_uint64)]

lib = ctypes.CDLL("libxxhash.so.0")
lib.XXH3_128bits.restype = H128
lib.XXH3_128bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]

def h128(b):
    h = lib.XXH3_128bits(b, len(b))
    return "%016x%016x" % (h.high64, h.low64)

def iso(ms):
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)

path, tenant, counter, through = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rid = sys.argv[5] if len(sys.argv) > 5 else None
prev = "0" * 32
if os.path.exists(path):
    lines = open(path, "rb").read().split(b"\n")
    lines = [l for l in lines if l]
    n = len(lines)
    if lines:
        prev = h128(lines[-1])
else:
    n = 0
rec = {"audit_id": "a-test-%d" % (n + 1), "tenant_id": tenant, "counter_id": counter,
       "through": iso(through), "through_ms": through, "audited_at": iso(through + 3 * 3600000),
       "authority": "ivt-audit test", "examined": 10, "flagged": 1 if rid else 0,
       "retraction_id": rid, "prev": prev}
with open(path, "ab") as f:
    f.write(json.dumps(rec, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
