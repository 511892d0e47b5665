#!/usr/bin/env python3
"""Deterministic view beacons for tests/series.bats: N events over the
days around the spring-forward of Europe/Berlin (2026-03-29), three
creators' videos, countries, devices and sources, some without a country.
Usage: gen-events.py SEED N"""
import json, random, sys

seed, n = int(sys.argv[1]), int(sys.argv[2])
rnd = random.Random(seed)
videos = {"v-a1": "ana", "v-a2": "ana", "v-b1": "ben", "v-c1": "cho \"q\""}
base = 1774648800000          # 2026-03-27T22:00:00Z = 2026-03-27T23:00+01:00
for i in range(n):
    v = rnd.choice(sorted(videos))
    attrs = {"creator": videos[v], "device": rnd.choice(["tv", "phone", "web"]),
             "source": rnd.choice(["search", "home", "ext"])}
    if rnd.random() < 0.8:
        attrs["country"] = rnd.choice(["DE", "FR", "US"])
    t = base + rnd.randrange(0, 3 * 86400) * 1000
    print(json.dumps({"idempotency_key": f"k{i}", "tenant_id": "tube", "counter_id": "views",
                      "member_ref": v, "item": f"u{rnd.randrange(40)}", "delta": 1,
                      "event_time": t, "attrs": attrs}))
    if i % 7 == 0:
        print(json.dumps({"idempotency_key": f"l{i}", "tenant_id": "tube", "counter_id": "likes",
                          "member_ref": v, "delta": 1, "event_time": t, "attrs": attrs}))
