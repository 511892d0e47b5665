#!/usr/bin/env python3
"""Beacons of one day (2026-06-08, UTC) on tube/views for tests/audit.bats.

Usage: gen.py [PART...]  (default: all parts), JSON lines on stdout.
  honest    20 viewers h01..h20, 1 to 3 videos each, hours apart, varied
            watch times, one ip_prefix each; h01..h05 resend each beacon
            once (a duplicate of the same (viewer, video))
  lockstep  viewers L1..L3: v1..v5 within 40 s each (5 videos, rule: 4 in 60 s)
  burst     viewers B01..B12 on v6 from ip_prefix 203.0.113.0/24 within 22 s
            (12 events, rule: more than 10 in 60 s)
  watch     viewers W1, W2: v1..v4 two hours apart, ms_watched 30000 each
  late      2 honest views on 2026-06-09 (after the watermark)
Everything is deterministic (no randomness)."""
import json
import sys

DAY = 1780876800000  # 2026-06-08T00:00:00Z
H, M, S = 3600000, 60000, 1000
out = []


def ev(key, viewer, video, t, ms, ip, counter="views"):
    out.append({"idempotency_key": key, "tenant_id": "tube", "counter_id": counter,
                "member_ref": video, "item": viewer, "delta": 1, "event_time": t,
                "attrs": {"ms_watched": str(ms), "ip_prefix": ip, "country": "IN"}})


def honest():
    for n in range(1, 21):
        viewer = "h%02d" % n
        for j in range(1 + n % 3):
            video = "v%d" % (1 + (n + 2 * j) % 6)
            t = DAY + (1 + n % 5 + 7 * j) * H + n * M
            ev("hb-%d-%d" % (n, j), viewer, video, t, 10000 + 997 * n + 131 * j, "10.0.%d.0/24" % n)
            if n <= 5:
                ev("hb-%d-%d-again" % (n, j), viewer, video, t + 5 * S, 10000 + 997 * n + 131 * j + 7,
                   "10.0.%d.0/24" % n)


def lockstep():
    for n in range(1, 4):
        for v in range(1, 6):
            ev("lb-%d-%d" % (n, v), "L%d" % n, "v%d" % v, DAY + 15 * H + n * M + v * 8 * S,
               20000 + 1000 * v + 17 * n, "10.9.%d.0/24" % n)


def burst():
    for n in range(1, 13):
        ev("bb-%d" % n, "B%02d" % n, "v6", DAY + 18 * H + 2 * n * S, 40000 + 113 * n, "203.0.113.0/24")


def watch():
    for n in (1, 2):
        for v in range(1, 5):
            ev("wb-%d-%d" % (n, v), "W%d" % n, "v%d" % v, DAY + (2 * v) * H + n * M, 30000,
               "10.8.%d.0/24" % n)


def late():
    ev("late-1", "h01", "v1", DAY + 26 * H, 12345, "10.0.1.0/24")
    ev("late-2", "h02", "v2", DAY + 27 * H, 23456, "10.0.2.0/24")


parts = sys.argv[1:] or ["honest", "lockstep", "burst", "watch", "late"]
for p in parts:
    globals()[p]()
for e in out:
    print(json.dumps(e, separators=(",", ":")))
