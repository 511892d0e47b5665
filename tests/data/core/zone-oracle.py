#!/usr/bin/python3
"""Bucket attribution cases and their expected buckets, from Python's
zoneinfo (an implementation independent of lib/time/tz.c).

Usage: zone-oracle.py EVENTS.jsonl EXPECTED.jsonl

For every tenant of tests/data/core/defs.json whose zone has an interesting
offset (half and quarter hours, DST in both directions, Lord Howe's 30-minute
shift), it takes the instants around each offset change of 2026 and around
the local midnights next to them (1 ms before, at, 1 ms after, +29 min,
+59 min 59.999 s), writes one raw event per instant (idempotency key "zN"),
and the bucket lib/time/tz.h's rule gives it:

    the instants in the same constant-offset interval AND the same local
    hour floor((t + offset) / 1 h)

computed here from zoneinfo's offsets by scanning minute by minute (every
offset change of these zones falls on a whole minute).
"""
import datetime as dt
import json
import sys
from zoneinfo import ZoneInfo

H = 3600_000
M = 60_000
TENANTS = {
    "utc": "UTC",
    "kol": "Asia/Kolkata",
    "ktm": "Asia/Kathmandu",
    "ber": "Europe/Berlin",
    "stj": "America/St_Johns",
    "lhi": "Australia/Lord_Howe",
}
YEAR_START = 1767225600_000   # 2026-01-01T00:00:00Z
YEAR_END = 1798761600_000     # 2027-01-01T00:00:00Z


def offset_ms(zone, t_ms):
    d = dt.datetime.fromtimestamp(t_ms // 1000, tz=zone)
    return int(d.utcoffset().total_seconds()) * 1000


def bucket(zone, t):
    off = offset_ms(zone, t)
    local_hour = (t + off) // H * H
    start, end = local_hour - off, local_hour + H - off
    m = t // M * M
    while m > start:                       # an offset change inside (start, t]?
        if offset_ms(zone, m - 1) != off:
            start = m
            break
        m -= M
    m = t // M * M + M
    while m < end:                         # an offset change inside (t, end)?
        if offset_ms(zone, m) != off:
            end = m
            break
        m += M
    return start, end


def transitions(zone):
    out = []
    prev = offset_ms(zone, YEAR_START)
    for h in range(YEAR_START, YEAR_END, H):
        cur = offset_ms(zone, h)
        if cur != prev:                    # refine to the minute
            m = h - H
            while offset_ms(zone, m) == prev:
                m += M
            out.append(m)
            prev = cur
    return out


def local_midnights(zone, t):
    d = dt.datetime.fromtimestamp(t // 1000, tz=zone).date()
    out = []
    for k in (-1, 0, 1):
        day = d + dt.timedelta(days=k)
        mid = dt.datetime(day.year, day.month, day.day, tzinfo=zone)
        out.append(int(mid.timestamp()) * 1000)
    return out


def main():
    events = open(sys.argv[1], "w")
    expected = open(sys.argv[2], "w")
    n = 0
    for tenant, name in TENANTS.items():
        zone = ZoneInfo(name)
        anchors = transitions(zone) or [1772323200_000]   # UTC: 2026-03-01
        points = set()
        for a in anchors:
            for b in [a] + local_midnights(zone, a):
                for d in (-1, 0, 1, 29 * M, H - 1):
                    points.add(b + d)
        for t in sorted(points):
            n += 1
            s, e = bucket(zone, t)
            assert s <= t < e and e - s <= H
            events.write(json.dumps({"idempotency_key": f"z{n}", "tenant_id": tenant,
                                     "counter_id": "dist", "member_ref": "m", "delta": 1,
                                     "event_time": t}, separators=(",", ":")) + "\n")
            expected.write(json.dumps({"k": f"z{n}", "start": s, "end": e}, separators=(",", ":")) + "\n")


main()
