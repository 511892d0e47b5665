#!/usr/bin/env python3
"""Writes day.jsonl, the view beacons of examples/views.sh: one day
(2026-06-08 in Sao Paulo) on the video platform "vidly".

Run it again to regenerate the committed file (the output is fixed by the
seed below); the walkthrough reads the committed file, not this script.

What is in it (the walkthrough checks each figure):
  * honest viewers h-001..h-060 watching the creators' videos, from
    several countries, devices and sources, each view a beacon with
    ms_watched; some viewers watch a video twice (a re-view the
    (viewer, video) dedup suppresses) and some beacons are retried
    (the same idempotency key twice);
  * short views: honest beacons below the 10 s watch-time gate;
  * known bots: user agents from the bot list, and addresses from a
    datacenter range on the address list;
  * one scraper firing beacons faster than any person can watch;
  * a lockstep ring: viewers r-01..r-12 who each view the same three
    videos within seconds of one another, each for exactly 31000 ms;
  * a reload loop: one viewer reloading one video every two minutes for an
    hour (thirty beacons, one view: the inflation signal).
"""
import json
import random

rng = random.Random(20260608)
DAY = "2026-06-08"
VIDEOS = {"c-ana": ["v-ana-1", "v-ana-2"], "c-ben": ["v-ben-1"], "c-chi": ["v-chi-1", "v-chi-2"]}
CREATOR = {v: c for c, vs in VIDEOS.items() for v in vs}
ALLV = sorted(CREATOR)
COUNTRIES = ["BR", "BR", "BR", "AR", "US", "PT"]
DEVICES = ["android", "android", "ios", "web"]
SOURCES = ["home", "search", "share"]
UAS = ["Mozilla/5.0 (Linux; Android 14)", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5)",
       "Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0"]
out = []
seq = [0]


def t(h, m, s):
    return "%sT%02d:%02d:%02d-03:00" % (DAY, h, m, s)


def beacon(viewer, video, when, ms, country, device, source, ua, ip, key=None):
    seq[0] += 1
    out.append({
        "idempotency_key": key or "b-%05d" % seq[0],
        "tenant_id": "vidly", "counter_id": "views", "member_ref": video,
        "item": viewer, "delta": 1, "event_time": when,
        "attrs": {"ms_watched": str(ms), "country": country, "device": device,
                  "source": source, "user_agent": ua, "ip": ip, "creator": CREATOR[video]}})
    return out[-1]


for i in range(1, 61):
    viewer = "h-%03d" % i
    country, device = rng.choice(COUNTRIES), rng.choice(DEVICES)
    ua = {"android": UAS[0], "ios": UAS[1], "web": UAS[2]}[device]
    ip = "198.51.100.%d" % i
    for video in rng.sample(ALLV, rng.randint(1, 3)):
        h, m = rng.randint(6, 22), rng.randint(0, 59)
        ms = rng.choice([rng.randint(12000, 600000)] * 5 + [rng.randint(1000, 9000)])
        b = beacon(viewer, video, t(h, m, rng.randint(0, 59)), ms, country, device,
                   rng.choice(SOURCES), ua, ip)
        if rng.random() < 0.15:   # a retried beacon: the same idempotency key
            out.append(dict(b))
        if rng.random() < 0.10:   # a re-view later that day: dedup per (viewer, video)
            beacon(viewer, video, t(min(h + 1, 23), m, 0), rng.randint(12000, 90000),
                   country, device, "home", ua, ip)

for i, ua in enumerate(["Googlebot/2.1 (+http://www.google.com/bot.html)",
                        "python-requests/2.31.0", "curl/8.5.0"]):
    for j, video in enumerate(ALLV):
        beacon("bot-%d" % i, video, t(3, 10 + j, i), 45000, "US", "web", "home", ua,
               "198.51.100.%d" % (200 + i))
for j, video in enumerate(ALLV):
    for k in range(3):
        beacon("dc-%d" % k, video, t(4, 20 + j, k), 60000, "US", "web", "share", UAS[2],
               "203.0.113.%d" % (10 + k))
for k in range(40):                  # one viewer, forty views in forty seconds
    beacon("s-scraper", ALLV[k % len(ALLV)], t(5, 0, k), 15000, "BR", "web", "search",
           UAS[2], "198.51.100.250")
for r in range(1, 13):              # the ring: same three videos, seconds apart
    for j, video in enumerate(["v-ben-1", "v-chi-1", "v-ana-2"]):
        beacon("r-%02d" % r, video, t(20, 1, 4 * r + j), 31000, "BR", "android", "share",
               UAS[0], "198.51.100.%d" % (100 + r))

for k in range(30):                  # a reload loop: one viewer, one video, every 2 min
    beacon("h-007", "v-chi-2", t(14 + k // 30, 2 * (k % 30), 30), 12000, "BR", "android",
           "home", UAS[0], "198.51.100.7")

out.sort(key=lambda e: (e["event_time"], e["idempotency_key"]))
with open("day.jsonl", "w") as f:
    for e in out:
        f.write(json.dumps(e, separators=(",", ":")) + "\n")
