#!/usr/bin/python3
"""Deterministic raw events for tests/days.bats: gen-days.py SEED N > events.jsonl

N events of tenants ber (Europe/Berlin), nyc (America/New_York) and utc
over 2026-02-20 .. 2026-04-10 and 2026-10-20 .. 2026-11-10, so that the
DST days (Berlin 2026-03-29 and 10-25, New York 03-08 and 11-01) have
events in each of their hours; about a third of the events fall on those
days.  Counters ber/pts (exact, a country dimension, some events without
it), ber/best (max), nyc/pts (exact, negative deltas too), nyc/uniq
(unique: items u0..u199) and utc/pts; members m0..m11.  About 5 % of the
lines repeat an earlier line (a retry).  random.Random(SEED), no clock.
"""
import json
import random
import sys

seed, n = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
H = 3600 * 1000
SPANS = [(1771545600000, 1775779200000), (1792454400000, 1794268800000)]  # Feb 20..Apr 10, Oct 20..Nov 10
DST = [1774738800000 - 6 * H, 1772946000000 - 6 * H, 1792879200000 - 6 * H, 1793505600000 - 6 * H]
lines = []
for i in range(n):
    if lines and r.random() < 0.05:
        lines.append(r.choice(lines))
        continue
    if r.random() < 0.35:
        t = r.choice(DST) + r.randrange(36 * H)
    else:
        a, b = r.choice(SPANS)
        t = a + r.randrange(b - a)
    kind = r.choice(["ber", "ber", "best", "nyc", "nyc", "uniq", "utc"])
    e = {"idempotency_key": f"d{seed}-{i}", "member_ref": f"m{r.randrange(12)}", "event_time": t}
    if kind == "ber":
        e.update(tenant_id="ber", counter_id="pts", delta=r.randrange(1, 50))
        if r.random() < 0.8:
            e["attrs"] = {"country": r.choice(["de", "fr", "it"])}
    elif kind == "best":
        e.update(tenant_id="ber", counter_id="best", delta=r.randrange(-100, 1000))
    elif kind == "nyc":
        e.update(tenant_id="nyc", counter_id="pts", delta=r.randrange(-5, 40))
    elif kind == "uniq":
        e.update(tenant_id="nyc", counter_id="uniq", delta=1, item=f"u{r.randrange(200)}")
    else:
        e.update(tenant_id="utc", counter_id="pts", delta=r.randrange(1, 10))
    lines.append(json.dumps(e, separators=(",", ":")))
print("\n".join(lines))
