#!/usr/bin/python3
"""The bucket records cnt-ingest | cnt-dedup | cnt-window | cnt-accumulate
should produce, computed independently in Python from the raw JSON lines.

Usage: expect-buckets.py DEFS NOW_MS EVENTS.jsonl > expected.jsonl

Every line of EVENTS is taken as admitted at NOW_MS (one cnt-ingest run).
Rules, from the manual pages: a repeated (tenant, counter, idempotency key)
-- or (tenant, counter, member_ref, item) for dedup_key item_member -- is
dropped, the first occurrence kept; the bucket is the tenant-local hour
(zoneinfo offset; the zones used here have no offset change in the data's
range); an event is late when NOW_MS > bucket_end + lateness_horizon_s;
unique counters have delta 1 when none is given.  Output: one JSON object
per (tenant, counter, version, member, bucket), in the canonical key order
(strings by their UTF-8 bytes, then numbers), shaped like cnt-diff's JSON
for a record: sums as integers, sketches as the exact distinct counts
(which HLL++ reproduces exactly at these small cardinalities).
"""
import datetime as dt
import json
import sys
from zoneinfo import ZoneInfo

H = 3600_000
defs = json.load(open(sys.argv[1]))
now = int(sys.argv[2])
zones = {t["tenant_id"]: ZoneInfo(t["timezone"]) for t in defs["tenants"]}
ver = {(c["tenant_id"], c["counter_id"]): c["versions"][-1] for c in defs["counters"]}

seen = {}
groups = {}
for line in open(sys.argv[3]):
    e = json.loads(line)
    tn, cn = e["tenant_id"], e["counter_id"]
    v = ver[(tn, cn)]
    if v.get("dedup_key") == "item_member":
        k = (tn, cn, "im", e["member_ref"], e["item"])
    else:
        k = (tn, cn, "ik", e["idempotency_key"])
    horizon = v.get("dedup_horizon_s", 86400)
    if k in seen and now // 1000 < seen[k]:
        continue
    seen[k] = now // 1000 + horizon
    t = e["event_time"]
    off = int(dt.datetime.fromtimestamp(t // 1000, tz=zones[tn]).utcoffset().total_seconds()) * 1000
    start = (t + off) // H * H - off
    end = start + H
    late = now > end + v.get("lateness_horizon_s", 3600) * 1000
    delta = e.get("delta", 1)
    key = (tn.encode(), cn.encode(), v["version"], e["member_ref"].encode(), start, 0)
    g = groups.setdefault(key, {
        "tenant_id": tn, "counter_id": cn, "counter_version": v["version"],
        "member_ref": e["member_ref"], "bucket_start": start, "bucket_end": end, "shard": 0,
        "count": 0, "sum": 0, "min": None, "max": None, "last_event_time": None,
        "max_ingest_time": now, "late_count": 0, "late_sum": 0,
        "items": None, "late_items": None, "last_event_count": 0, "max_ingest_count": 0})
    exact = v.get("type", "exact") == "exact"
    g["max_ingest_count"] += 1   # every event is ingested at `now`
    if late:
        g["late_count"] += 1
        g["late_sum"] += delta
        if "item" in e and not exact:
            g["late_items"] = (g["late_items"] or set()) | {e["item"]}
    else:
        g["count"] += 1
        g["sum"] += delta
        if not exact:   # an exact counter keeps no min, max or sketch
            g["min"] = delta if g["min"] is None else min(g["min"], delta)
            g["max"] = delta if g["max"] is None else max(g["max"], delta)
        if g["last_event_time"] is None or t > g["last_event_time"]:
            g["last_event_time"], g["last_event_count"] = t, 1
        elif t == g["last_event_time"]:
            g["last_event_count"] += 1
        if "item" in e and not exact:
            g["items"] = (g["items"] or set()) | {e["item"]}

for key in sorted(groups):
    g = groups[key]
    items, late_items = g.pop("items"), g.pop("late_items")
    g["sketch_estimate"] = None if items is None else len(items)
    g["late_sketch_estimate"] = None if late_items is None else len(late_items)
    g["last_event_count"] = g.pop("last_event_count")
    g["max_ingest_count"] = g.pop("max_ingest_count")
    print(json.dumps(g, separators=(",", ":")))
