#!/usr/bin/python3
"""Window-boundary events and their expectations for tests/project.bats:
gen-windows.py EVENTS.jsonl CASES.jsonl

The window of every case is computed here from Python's zoneinfo (an
independent implementation of the IANA rules) and the rules of lib/time/tz.h,
never from cnt.  For each case four events of delta 1 are written, one
member each, named CASE.in.LABEL or CASE.out.LABEL:
  out.before  1 ms before the window starts     in.start  at its start
  in.last     1 ms before it ends               out.end   at its end
(plus a few extra ones where a case has a subtler edge).  A case line
holds the board, the --now (epoch ms), an optional --season, and the
window [from, to) the view must record.
"""
import json
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

H = 3600 * 1000
TZ = {"kol": "Asia/Kolkata", "stj": "America/St_Johns", "ber": "Europe/Berlin"}


def ms(dt):
    return int(dt.astimezone(timezone.utc).timestamp()) * 1000 + dt.microsecond // 1000


def local(zone, y, mo, d, h=0, mi=0):
    """A wall time that occurs once (none of ours is in a gap or a fold)."""
    t = ms(datetime(y, mo, d, h, mi, tzinfo=ZoneInfo(zone)))
    back = datetime.fromtimestamp(t / 1000, ZoneInfo(zone))
    assert (back.year, back.month, back.day, back.hour, back.minute) == (y, mo, d, h, mi), (zone, y, mo, d, h)
    return t


def offset_ms(zone, t):
    dt = datetime.fromtimestamp(t / 1000, timezone.utc).astimezone(ZoneInfo(zone))
    return int(dt.utcoffset().total_seconds()) * 1000


def bucket_start(zone, t):
    """The local hour holding t (no offset change falls inside our hours)."""
    return t - (t + offset_ms(zone, t)) % H


def round_up(zone, t):
    b = bucket_start(zone, t)
    return t if b == t else b + H


def day_start(zone, d):
    return local(zone, d.year, d.month, d.day)


def month_bounds(zone, y, mo):
    ny, nm = (y + 1, 1) if mo == 12 else (y, mo + 1)
    return local(zone, y, mo, 1), local(zone, ny, nm, 1)


cases = []


def case(name, board, now, lo, hi, season=None, extra=()):
    cases.append({"case": name, "board": board, "now": now, "season": season, "from": lo, "to": hi,
                  "extra": list(extra)})


D = lambda y, m, d: datetime(y, m, d).date()

# day: Kolkata (+05:30, no DST); St. John's on its spring-forward day
# (23 hours, -03:30 -> -02:30); Berlin on its fall-back day (25 hours).
for name, tz, day, hour in [("kol_day", "kol", D(2026, 3, 10), 12), ("stj_day", "stj", D(2026, 3, 8), 12),
                            ("ber_day", "ber", D(2026, 10, 25), 12)]:
    z = TZ[tz]
    lo, hi = day_start(z, day), day_start(z, day + timedelta(days=1))
    case(name, name, local(z, day.year, day.month, day.day, hour), lo, hi)
assert [c["to"] - c["from"] for c in cases] == [24 * H, 23 * H, 25 * H]

# week: Kolkata weeks start on Monday, St. John's on Sunday, Berlin on
# Monday (the default) with the spring-forward Sunday as the week's last day.
for name, tz, day, start_wd in [("kol_week", "kol", D(2026, 3, 11), 0), ("stj_week", "stj", D(2026, 3, 10), 6),
                                ("ber_week", "ber", D(2026, 3, 29), 0)]:
    z = TZ[tz]
    first = day - timedelta(days=(day.weekday() - start_wd) % 7)
    lo, hi = day_start(z, first), day_start(z, first + timedelta(days=7))
    case(name, name, local(z, day.year, day.month, day.day, 9), lo, hi)
assert cases[-3]["from"] == local("Asia/Kolkata", 2026, 3, 9)          # Monday
assert cases[-2]["from"] == local("America/St_Johns", 2026, 3, 8)      # Sunday
assert cases[-1]["from"] == local("Europe/Berlin", 2026, 3, 23)        # Monday

# month: February in Kolkata; March in St. John's and Berlin (both with a
# DST change inside); Berlin asked at 23:30 on the month's last day.
for name, tz, y, mo, now in [("kol_month", "kol", 2026, 2, (15, 12, 0)), ("stj_month", "stj", 2026, 3, (20, 12, 0)),
                             ("ber_month", "ber", 2026, 3, (31, 23, 30))]:
    z = TZ[tz]
    lo, hi = month_bounds(z, y, mo)
    case(name, name, local(z, y, mo, *now), lo, hi)

# rolling_24h: the 24 h ending at the end of the bucket of now - 1 ms.
for name, board, tz, now in [("kol_r24", "kol_r24", "kol", (2026, 3, 10, 12, 45)),
                             ("ber_r24", "ber_r24", "ber", (2026, 3, 29, 12, 30)),
                             ("ber_r24h", "ber_r24", "ber", (2026, 3, 29, 12, 0)),
                             ("stj_r24", "stj_r24", "stj", (2026, 3, 8, 12, 40))]:
    z = TZ[tz]
    t = local(z, *now)
    hi = bucket_start(z, t - 1) + H
    case(name, board, t, hi - 24 * H, hi, extra=[("in", "now_minus_1ms", t - 1)])
# mid-hour: now's own partial hour is in; on the hour it ends the window
assert cases[-3]["to"] == local("Europe/Berlin", 2026, 3, 29, 13)
assert cases[-2]["to"] == local("Europe/Berlin", 2026, 3, 29, 12)
# across the gap the window is 24 absolute hours: 12:00 CET to 13:00 CEST
assert cases[-3]["from"] == local("Europe/Berlin", 2026, 3, 28, 12)
assert cases[-1]["from"] == local("America/St_Johns", 2026, 3, 7, 12)

# last_30d: 30 local days ending with today, across Berlin's spring forward.
z = TZ["ber"]
today = D(2026, 4, 10)
case("ber_30d", "ber_30d", local(z, 2026, 4, 10, 8), day_start(z, today - timedelta(days=29)),
     day_start(z, today + timedelta(days=1)))
assert cases[-1]["from"] == local(z, 2026, 3, 12)
zs = TZ["stj"]
today = D(2026, 3, 20)
case("stj_30d", "stj_30d", local(zs, 2026, 3, 20, 23, 59), day_start(zs, today - timedelta(days=29)),
     day_start(zs, today + timedelta(days=1)))
assert cases[-1]["from"] == local(zs, 2026, 2, 19)

# seasons (defs.json): s1 in local Berlin times, named with --season while
# --now is in s2; s2 with offsets, found from --now; s3 in the season's own
# zone (Kolkata), rounded up to Berlin's hour buckets.
lo, hi = local(z, 2026, 3, 1), local(z, 2026, 4, 1)
case("ber_s1", "ber_season", local(z, 2026, 4, 15, 12), lo, hi, season="s1")
case("ber_s2", "ber_season", local(z, 2026, 4, 15, 12), ms(datetime(2026, 4, 1, tzinfo=timezone(timedelta(hours=2)))),
     ms(datetime(2026, 5, 1, tzinfo=timezone(timedelta(hours=2)))))
k_lo, k_hi = local("Asia/Kolkata", 2026, 6, 1), local("Asia/Kolkata", 2026, 7, 1)
case("ber_s3", "ber_season", local(z, 2026, 6, 15, 12), round_up(z, k_lo), round_up(z, k_hi),
     extra=[("out", "kolkata_midnight", k_lo)])
assert round_up(z, k_lo) - k_lo == H // 2

# range: local [2026-03-28 22:00, 2026-03-29 03:30) in Berlin, across the
# gap; 'to' rounds up to the bucket boundary 04:00 CEST, so 03:45 is in.
r_to = local(z, 2026, 3, 29, 3, 30)
case("ber_range", "ber_range", local(z, 2026, 4, 1), local(z, 2026, 3, 28, 22), round_up(z, r_to),
     extra=[("in", "after_to_same_bucket", local(z, 2026, 3, 29, 3, 45))])
assert cases[-1]["to"] - cases[-1]["from"] == 5 * H     # local hours 22, 23, 00, 01, 03 (02 never happens)

# range given as instants in a half-hour zone: from 01:00 NST (a bucket
# boundary), to 04:15 NDT, rounded up to 05:00 NDT.
nst, ndt = timezone(timedelta(hours=-3, minutes=-30)), timezone(timedelta(hours=-2, minutes=-30))
r_from, r_to = ms(datetime(2026, 3, 8, 1, tzinfo=nst)), ms(datetime(2026, 3, 8, 4, 15, tzinfo=ndt))
case("stj_range", "stj_range", local(zs, 2026, 4, 1), round_up(zs, r_from), round_up(zs, r_to),
     extra=[("in", "after_to_same_bucket", r_to)])
assert cases[-1]["from"] == r_from and cases[-1]["to"] == local(zs, 2026, 3, 8, 5)

with open(sys.argv[1], "w") as ev, open(sys.argv[2], "w") as cs:
    for c in cases:
        tenant = c["board"].split("_")[0]
        pts = [("out", "before", c["from"] - 1), ("in", "start", c["from"]), ("in", "last", c["to"] - 1),
               ("out", "end", c["to"])] + [tuple(x) for x in c["extra"]]
        for io, label, t in pts:
            m = f"{c['case']}.{io}.{label}"
            ev.write(json.dumps({"idempotency_key": m, "tenant_id": tenant, "counter_id": "pts",
                                 "member_ref": m, "delta": 1, "event_time": t}) + "\n")
        del c["extra"]
        cs.write(json.dumps(c) + "\n")
