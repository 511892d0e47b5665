#!/usr/bin/python3
"""Deterministic raw events for the counting-core tests (pipeline.bats,
accumulate.bats): gen-events.py SEED N > events.jsonl

N events of tenants utc (UTC) and kol (Asia/Kolkata), counters
utc/dist (exact, lateness 600 s), utc/clicks (exact, negative deltas too),
utc/views (unique, view-count key) and kol/dist, for members m0..m9 (videos
v0..v4, viewers u0..u29), event times between 2026-03-01T09:00Z and 12:00Z.
About 5 % of the lines repeat an earlier line's idempotency key (a retry:
same event), and views repeat (video, viewer) pairs under new keys.  The
same SEED and N always give the same bytes (random.Random(SEED), no clock).
"""
import json
import random
import sys

seed, n = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
T_START = 1772355600000            # 2026-03-01T09:00:00Z
SPAN = 3 * 3600 * 1000
lines = []
for i in range(n):
    if lines and r.random() < 0.05:
        lines.append(r.choice(lines))  # a retry: the very same line
        continue
    kind = r.choice(["dist", "dist", "clicks", "views", "kol"])
    t = T_START + r.randrange(SPAN)
    e = {"idempotency_key": f"e{seed}-{i}", "tenant_id": "utc", "counter_id": kind,
         "member_ref": f"m{r.randrange(10)}", "event_time": t}
    if kind == "dist":
        e["delta"] = r.randrange(0, 5000)
    elif kind == "clicks":
        e["delta"] = r.randrange(-50, 51)
    elif kind == "views":
        e["member_ref"] = f"v{r.randrange(5)}"
        e["item"] = f"u{r.randrange(30)}"
    else:
        e["tenant_id"], e["counter_id"] = "kol", "dist"
        e["delta"] = r.randrange(1, 100)
    lines.append(json.dumps(e, separators=(",", ":")))
sys.stdout.write("\n".join(lines) + "\n")
