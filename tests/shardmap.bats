#!/usr/bin/env bats
# Hot keys (cnt-shardmap(1), cnt-shardmap(5)): a shard map derived from
# cnt-window --stats or cnt-ingest --stats (top_keys), splits and merges with hysteresis and a
# hold time, recorded with their times; cnt-window --shard-map shards only
# the mapped keys; cnt-partition --shard-map spreads a hot member over the
# parts while every duplicate still meets its original, and the parts
# merge into the bytes of the one-machine run with the same map.

bats_require_minimum_version 1.5.0
load data/core/common

NOW1=2026-03-01T12:01:00Z
NOW2=2026-03-01T12:31:00Z
D1=2026-03-02T00:00:00Z

# hot_events SEED N: utc/views with member "hot" on 40 % of the events
# (items i0..i4999: a repeat is dropped as a duplicate by the view-count
# key), utc/dist with "hot" on 30 %, the rest spread over 50 members;
# 5 % retries of earlier lines.
hot_events() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, random, sys
r = random.Random(int(sys.argv[1])); n = int(sys.argv[2]); out = []
for i in range(n):
    t = "2026-03-01T%02d:%02d:00Z" % (r.randrange(8, 12), r.randrange(60))
    if r.random() < 0.05 and out:
        out.append(r.choice(out)); continue
    if r.random() < 0.5:
        m = "hot" if r.random() < 0.8 else "m%d" % r.randrange(50)
        e = {"idempotency_key": "v-%d-%s" % (i, sys.argv[1]), "tenant_id": "utc", "counter_id": "views",
             "member_ref": m, "item": "i%d" % r.randrange(5000), "delta": 1, "event_time": t}
    else:
        m = "hot" if r.random() < 0.6 else "m%d" % r.randrange(50)
        e = {"idempotency_key": "d-%d-%s" % (i, sys.argv[1]), "tenant_id": "utc", "counter_id": "dist",
             "member_ref": m, "delta": r.randrange(1, 100), "event_time": t}
    out.append(json.dumps(e))
print("\n".join(out))
PYEOF
}

setup_file() {
	local d=$BATS_FILE_TMPDIR
	hot_events 1 3000 >"$d/day1.jsonl"
	hot_events 2 2000 >"$d/day2.jsonl"
	sed -n '1~7p' "$d/day1.jsonl" >>"$d/day2.jsonl"   # retries across days
	cnt-ingest -d "$DEFS" --now "$NOW1" -o "$d/day1.avro" - <"$d/day1.jsonl" 2>/dev/null
	cnt-ingest -d "$DEFS" --now "$NOW2" -o "$d/day2.avro" - <"$d/day2.jsonl" 2>/dev/null
	cnt-dedup -d "$DEFS" "$d/day1.avro" | cnt-window -d "$DEFS" --stats "$d/w1.json" -o /dev/null
	cnt-shardmap derive --now "$D1" --target 0.05 -o "$d/map.json" "$d/w1.json"
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	D=$BATS_FILE_TMPDIR
}

@test "cnt-window --stats lists the hottest keys with their events and shares, hottest first" {
	one '(.top_keys | length) == 32 and .top_keys[0] == (.top_key | del(.exact) + {share: $t[0].top_key_share})
		and ([.top_keys[0, 1] | [.counter_id, .member_ref]] | sort) == [["dist", "hot"], ["views", "hot"]]
		and ([.top_keys[].events] | . == (sort | reverse)) and all(.top_keys[]; .share > 0 and .share < 1)' \
		--slurpfile t "$D/w1.json" "$D/w1.json"
	# the counts are the window's own
	n=$(cnt-dedup -d "$DEFS" "$D/day1.avro" | cnt-window -d "$DEFS" | cnt-cat |
		jq -s '[.[] | select(.event.member_ref == "hot" and .event.counter_id == "views")] | length')
	one --argjson n "$n" '.top_keys[] | select(.counter_id == "views" and .member_ref == "hot") | .events == $n' "$D/w1.json"
}

@test "cnt-ingest --stats lists the hottest keys of the events it writes, as cnt-window over its log; derive reads either; cnt-dedup's keys lower a share" {
	cnt-ingest -d "$DEFS" --now "$NOW1" -o day1.avro --stats i1.json - <"$D/day1.jsonl" 2>/dev/null
	cmp day1.avro "$D/day1.avro"
	# the retries are duplicates, not counted
	jq -e '.duplicates > 0 and ([.top_keys[] | .share] | all(. > 0)) and (.top_keys | length) == 32' i1.json
	cnt-window -d "$DEFS" --stats w.json -o /dev/null day1.avro
	jq -e -s '.[0].out == .[1].out and .[0].top_keys == .[1].top_keys and .[0].top_key == .[1].top_key and
		.[0].top_key_share == .[1].top_key_share' i1.json w.json
	# derive reads either: the same map
	cnt-shardmap derive --now "$D1" --target 0.05 -o map-i.json i1.json
	cnt-shardmap derive --now "$D1" --target 0.05 -o map-w.json w.json
	cmp map-i.json map-w.json
	# but the log holds the views that cnt-dedup drops by their view-count
	# key: after it, the hot viewer's share is lower
	jq -e -s '.[0].out > .[1].out and
		([.[] | .top_keys[] | select(.counter_id == "views" and .member_ref == "hot") | .share] | .[0] > .[1])' \
		i1.json "$D/w1.json"
	# tracking the hot keys changes nothing in the log: without --stats its bytes are the same
	cnt-ingest -d "$DEFS" --now "$NOW1" -o again.avro - <"$D/day1.jsonl" 2>/dev/null
	cmp again.avro day1.avro
}

@test "top_keys leaves out a key its JSON cannot name (a member that is not UTF-8, from files no cnt tool wrote)" {
	for i in 1 2 3 4; do ev "h$i" dist hot 1; done >ev.jsonl
	ev k1 dist m1 1 >>ev.jsonl
	ev k2 dist m1 1 >>ev.jsonl
	ev k3 dist m2 1 >>ev.jsonl
	cnt-ingest -d "$DEFS" --now "$NOW1" --max-past 400d -c deflate -o clean.avro - <ev.jsonl
	# Debian's python3-avro writes it again, the hot member as "h\xff"
	"$PY" "$DATA/avro-poke.py" clean.avro bad.avro --bytes member_ref \
		h1 member_ref 'b"h\xff"' h2 member_ref 'b"h\xff"' h3 member_ref 'b"h\xff"' h4 member_ref 'b"h\xff"'
	cnt-window -d "$DEFS" --stats w.json -o /dev/null bad.avro
	# the hottest key is still the one the share measures, but top_keys,
	# which maps are derived from, holds only the keys a map can name
	one '.out == 7 and .top_key_share > 0.57 and .top_key.events == 4
		and [.top_keys[] | .member_ref] == ["m1", "m2"]' w.json
	cnt-shardmap derive --now "$D1" --target 0.05 -o map.json w.json
	one '[.keys[] | .member_ref] | all(. == "m1" or . == "m2")' map.json
}

@test "derive: only the hot keys are split, to the power of two their share needs; the split is recorded with --now" {
	cnt-shardmap derive --now "$D1" --target 0.05 -o m.json --stats st.json "$D/w1.json"
	cmp m.json "$D/map.json"
	# the keys above 5 %, each with the smallest power of two >= share / 0.05
	need='def need($t): . as $s | [1, 2, 4, 8, 16, 32, 64] | map(select(. >= $s / $t)) | first;'
	jq -c "$need"' [.top_keys[] | select(.share > 0.05) | [.tenant_id, .counter_id, .member_ref, (.share | need(0.05))]] | sort' \
		"$D/w1.json" >want.json
	[ "$(jq length want.json)" -eq 2 ]
	jq -c '[.keys[] | [.tenant_id, .counter_id, .member_ref, .shards]]' m.json | cmp - want.json
	one '.format == "cnt-shardmap/1" and .updated == "2026-03-02T00:00:00.000Z" and .events == $w[0].out
		and all(.keys[]; .history == [{"at": "2026-03-02T00:00:00.000Z", "from": 1, "to": .shards, "share": .share}])
		and all(.keys[]; .share as $s | $w[0].top_keys | any(.member_ref == "hot" and (.share - $s | fabs) < 1e-6))' \
		--slurpfile w "$D/w1.json" m.json
	one '.tool == "cnt-shardmap" and .in == 1 and .keys == 2 and .hot == 2 and .splits == 2 and .merges == 0
		and .max_shards == ($m[0].keys | map(.shards) | max)' --slurpfile m m.json st.json
	# the default target (1 %) splits more keys, into more shards; --max-shards caps
	cnt-shardmap derive --now "$D1" "$D/w1.json" >m1.json
	jq -c "$need"' [.top_keys[] | select(.share > 0.01) | [.tenant_id, .counter_id, .member_ref, (.share | need(0.01))]] | sort' \
		"$D/w1.json" >want1.json
	jq -c '[.keys[] | [.tenant_id, .counter_id, .member_ref, .shards]]' m1.json | cmp - want1.json
	cnt-shardmap derive --now "$D1" --target 0.05 --max-shards 2 "$D/w1.json" >m3.json
	one '[.keys[].shards] == [2, 2]' m3.json
	# show: one line per key
	run -0 cnt-shardmap show m.json
	[ "$output" = "$(jq -r '.keys[] | "\(.tenant_id)\t\(.counter_id)\t\(.member_ref)\t\(.shards)\t\(.share)"' m.json |
		awk -F'\t' -v OFS='\t' '{ $5 = sprintf("%.6f", $5); print }')" ]
	# the same inputs give the same bytes; several stats files add up
	cnt-shardmap derive --now "$D1" --target 0.05 "$D/w1.json" | cmp - "$D/map.json"
	cnt-shardmap derive --now "$D1" "$D/w1.json" "$D/w1.json" | jq -e '.events == 2 * $m[0].events' --slurpfile m "$D/map.json"
}

# stats OUT HOTSHARE: a stats object with 10000 events, utc/dist/hot at HOTSHARE
stats() {
	jq -n --argjson s "$2" '{tool: "cnt-window", out: 10000, top_keys: [{tenant_id: "utc", counter_id: "dist",
		member_ref: "hot", events: ($s * 10000 | round), share: $s}]}' >"$1"
}

@test "derive: merges need the share to fall below the band (hysteresis) and the hold time to pass; every change is recorded" {
	stats s7.json 0.07; stats s3.json 0.03; stats s1.json 0.015; stats s0.json 0
	cnt-shardmap derive --now 2026-03-01T00:00:00Z s7.json >a.json
	one '.keys[0].shards == 8' a.json
	# 3 %: 8 shards carry it (band 2 % .. 8 %): nothing changes, but the share is updated
	cnt-shardmap derive --now 2026-03-02T00:00:00Z --map a.json --stats st.json s3.json >b.json
	one '.keys[0].shards == 8 and .keys[0].share == 0.03 and (.keys[0].history | length) == 1 and .updated == "2026-03-02T00:00:00.000Z"' b.json
	one '.splits == 0 and .merges == 0' st.json
	# 1.5 %, but within the hold time (6 h after the split, hold 1d): held
	cnt-shardmap derive --now 2026-03-01T06:00:00Z --map a.json s1.json >c.json
	one '.keys[0].shards == 8' c.json
	# ... and with --hold 6h it merges to what 1.5 % needs
	cnt-shardmap derive --now 2026-03-01T06:00:00Z --hold 6h --map a.json s1.json >c2.json
	one '.keys[0].shards == 2 and .keys[0].history[1] == {"at": "2026-03-01T06:00:00.000Z", "from": 8, "to": 2, "share": 0.015}' c2.json
	# a day later: merged to 2
	cnt-shardmap derive --now 2026-03-03T00:00:00Z --map b.json s1.json >d.json
	one '.keys[0].shards == 2 and (.keys[0].history | map([.at, .from, .to])) ==
		[["2026-03-01T00:00:00.000Z", 1, 8], ["2026-03-03T00:00:00.000Z", 8, 2]]' d.json
	# a narrower band (--merge-ratio 0.5) merges 3 % from 8 shards at once
	cnt-shardmap derive --now 2026-03-02T00:00:00Z --merge-ratio 0.5 --map a.json s3.json >e.json
	one '.keys[0].shards == 4' e.json
	# gone cold: merged to 1 shard, kept with its history; split again later
	cnt-shardmap derive --now 2026-03-05T00:00:00Z --map d.json s0.json >f.json
	one '.keys[0].shards == 1 and .keys[0].share == 0 and (.keys[0].history | map(.to)) == [8, 2, 1]' f.json
	cnt-shardmap derive --now 2026-03-06T00:00:00Z --map f.json s3.json >g.json
	one '.keys[0].shards == 4 and (.keys[0].history | map(.to)) == [8, 2, 1, 4]' g.json
	cnt-shardmap show g.json | grep -qx "$(printf 'utc\tdist\thot\t4\t0.030000')"
	# time does not go back: --now must be after the map's update
	run -2 cnt-shardmap derive --now 2026-03-06T00:00:00Z --map g.json s3.json
	[[ $output == "cnt-shardmap: --now is not after the map's last update (2026-03-06T00:00:00.000Z)" ]]
}

@test "cnt-window --shard-map: a mapped key's events in XXH3(event_id) mod its shards, every other key in shard 0; the fan-in is unchanged" {
	cnt-dedup -d "$DEFS" "$D/day1.avro" -o kept.avro
	cnt-window -d "$DEFS" --shard-map "$D/map.json" --stats st.json -o w.avro kept.avro
	max=$(jq '[.keys[].shards] | max' "$D/map.json")
	one --argjson x "$max" '.shards == $x and .shard_map == {"keys": 2, "max_shards": $x}' st.json
	cnt-cat w.avro | jq -c '{c: .event.counter_id, m: .event.member_ref, s: .shard}' >ws.jsonl
	for c in dist views; do
		k=$(jq --arg c "$c" '.keys[] | select(.counter_id == $c) | .shards' "$D/map.json")
		jq -s -e --arg c "$c" --argjson k "$k" '(map(select(.m != "hot")) | all(.s == 0)) and
			(map(select(.m == "hot" and .c == $c) | .s) | unique) == [range($k)]' ws.jsonl
		# the shard is that of --shards K for the mapped key
		cnt-window -d "$DEFS" --shards "$k" kept.avro | cnt-cat | jq -c '{c: .event.counter_id, m: .event.member_ref, s: .shard}' >wk.jsonl
		[ "$(paste -d' ' ws.jsonl wk.jsonl | grep -F "\"c\":\"$c\",\"m\":\"hot\"" | awk '$1 != $2' | wc -l)" -eq 0 ]
	done
	# fan-in: the bucket records of a key summed over its shards are those without the map
	cnt-accumulate -o b1.avro w.avro
	cnt-window -d "$DEFS" kept.avro | cnt-accumulate -o b0.avro
	fan='group_by([.tenant_id, .counter_id, .member_ref, .bucket_start]) | map({
		k: [.[0].tenant_id, .[0].counter_id, .[0].member_ref, .[0].bucket_start],
		count: (map(.count) | add), sum: (map(.sum) | add), min: (map(.min | values) | min),
		max: (map(.max | values) | max), mit: (map(.max_ingest_time) | max)})'
	diff <(cnt-cat b1.avro | jq -s -c "$fan") <(cnt-cat b0.avro | jq -s -c "$fan")
	[ "$(cnt-cat b1.avro | wc -l)" -gt "$(cnt-cat b0.avro | wc -l)" ]
	# an empty map is no map
	jq '.keys = []' "$D/map.json" >empty.json
	cnt-window -d "$DEFS" --shard-map empty.json kept.avro | cnt-accumulate -o be.avro
	cmp be.avro b0.avro
}

@test "cnt-window --shard-map: the view projected from the mapped buckets is the one without the map" {
	E=$BATS_TEST_DIRNAME/../examples
	now=2026-11-30T09:00:00Z
	cnt-ingest -d "$E/definitions.json" --keyring "$E/keyring.json" --now "$now" -o a.avro -r /dev/null "$E/events.jsonl" 2>/dev/null
	cnt-dedup -d "$E/definitions.json" a.avro -o k.avro
	cnt-window -d "$E/definitions.json" --stats w.json k.avro | cnt-accumulate -o b0.avro
	cnt-shardmap derive --now "$now" --target 0.02 -o m.json w.json
	one '[.keys[] | select(.counter_id == "distance_m") | .shards] | length > 2 and all(. > 1)' m.json
	cnt-window -d "$E/definitions.json" --shard-map m.json k.avro | cnt-accumulate -o b1.avro
	! cmp -s b0.avro b1.avro
	for i in 0 1; do
		cnt-project -d "$E/definitions.json" -b acme-30d-distance -w "v$i" --now "$now" "b$i.avro"
		cnt-rank -w "v$i" -b acme-30d-distance --now "$now" top 100 >"r$i.json"
	done
	cmp r0.json r1.json
	one '.members > 2' r0.json
}

@test "cnt-partition --shard-map: a hot member over several parts, duplicates with their originals, the merge is the one-machine run" {
	# the one-machine run with the map
	for i in 1 2; do
		cnt-dedup -d "$DEFS" -s one.state --stats "one.dedup$i.json" "$D/day$i.avro" |
			cnt-window -d "$DEFS" --shard-map "$D/map.json" | cnt-accumulate -o "one.day$i.avro"
	done
	cnt-accumulate -o one.avro one.day1.avro one.day2.avro
	for day in 1 2; do
		cnt-partition -d "$DEFS" --parts 4 --shard-map "$D/map.json" --stats "p$day.json" -o "day$day" "$D/day$day.avro"
		for i in 0 1 2 3; do
			cnt-dedup -d "$DEFS" -s "part$i.state" --stats "b.day$day.$i.dedup.json" "day$day.$i.avro" |
				cnt-window -d "$DEFS" --shard-map "$D/map.json" | cnt-accumulate -o "b.day$day.$i.avro"
		done
		jq -s '{in: map(.in) | add, duplicates: map(.duplicates) | add}' b.day$day.*.dedup.json >sum.json
		jq '{in, duplicates}' "one.dedup$day.json" | cmp - <(jq . sum.json)
	done
	one '.duplicates > 100' one.dedup1.json
	cnt-accumulate -o merged.avro b.day*.avro
	cmp merged.avro one.avro
	# the hot member's views are in every part; without the map in one
	one '.by_shard > 1000 and .by_shard < .by_member' p1.json
	for i in 0 1 2 3; do
		cnt-cat "day1.$i.avro" | jq -e -s 'any(.[]; .member_ref == "hot" and .counter_id == "views")' >/dev/null
	done
	cnt-partition -d "$DEFS" --parts 4 -o plain --stats plain.json "$D/day1.avro"
	[ "$(for i in 0 1 2 3; do cnt-cat "plain.$i.avro" | jq -s 'any(.[]; .member_ref == "hot" and .counter_id == "views")'; done |
		grep -c true)" -eq 1 ]
	one '.by_shard == 0' plain.json
	# the largest part is smaller with the map
	[ "$(jq '.parts | max' p1.json)" -lt "$(jq '.parts | max' plain.json)" ]
	# every (member, item) pair of the views in exactly one part
	for i in 0 1 2 3; do cnt-cat "day1.$i.avro" | jq -r 'select(.counter_id == "views") | "\(.member_ref) \(.item)"' | sort -u; done |
		sort | uniq -d | wc -l | grep -qx 0
	# keys the map does not name are routed as without it
	for i in 0 1 2 3; do
		diff <(cnt-cat "day1.$i.avro" | jq -c 'select(.member_ref != "hot") | .event_id') \
			<(cnt-cat "plain.$i.avro" | jq -c 'select(.member_ref != "hot") | .event_id')
	done
}

@test "bad maps and stats are clear errors (status 2), naming the file and the place; nothing is written" {
	printf '{"format": "cnt-shardmap/1"' >trunc.json
	jq '.keys[0].shards = 3' "$D/map.json" >odd.json
	jq '.keys |= reverse' "$D/map.json" >order.json
	jq '.keys[0].history[0].from = 2' "$D/map.json" >chain.json
	jq '.keys[0].owner = "x"' "$D/map.json" >extra.json
	for t in window partition show; do
		for f in trunc odd order chain extra missing; do
			case $t in
			window) run -2 --separate-stderr cnt-window -d "$DEFS" --shard-map "$f.json" -o w.avro "$D/day1.avro" ;;
			partition) run -2 --separate-stderr cnt-partition -d "$DEFS" --parts 2 --shard-map "$f.json" -o p "$D/day1.avro" ;;
			show) run -2 --separate-stderr cnt-shardmap show "$f.json" ;;
			esac
			[ "${#stderr_lines[@]}" -eq 1 ]
			[[ $stderr == *"shard map '$f.json': "* ]]
		done
	done
	[ -z "$(ls -A | grep -v -e "\.json$" -e "^separate-stderr-" || :)" ]
	run -2 cnt-shardmap show odd.json
	[[ $output == *"\$.keys[0]: \"shards\": 3 is not a power of two from 1 to 65536" ]]
	run -2 cnt-shardmap show order.json
	[[ $output == *"\$.keys[1]: not after the key before it"* ]]
	run -2 cnt-shardmap show chain.json
	[[ $output == *"\$.keys[0].history[0]: \"from\" is 2, not 1"* ]]
	run -2 cnt-shardmap show extra.json
	[[ $output == *"\$.keys[0]: unknown member \"owner\""* ]]
	run -2 cnt-shardmap show trunc.json
	[[ $output == *"shard map 'trunc.json': line 1"* ]]
	# a stats file without top_keys, a bad map to update: no output written
	jq 'del(.top_keys)' "$D/w1.json" >old.json
	run -2 cnt-shardmap derive --now "$D1" -o out.json old.json
	[[ $output == "cnt-shardmap: stats 'old.json': \$: \"top_keys\" is missing" ]]
	run -2 cnt-shardmap derive --now "$D1" --map odd.json -o out.json "$D/w1.json"
	[ ! -e out.json ]
}

@test "usage errors: a command first, --now for derive, strict numbers, --shards or --shard-map" {
	run -2 cnt-shardmap --now "$D1" "$D/w1.json"
	[[ $output == *"a command is required first: derive or show"* ]]
	run -2 cnt-shardmap derive "$D/w1.json"
	[[ $output == *"derive needs --now time"* ]]
	run -2 cnt-shardmap derive --now "$D1"
	[[ $output == *"at least one --stats file"* ]]
	run -2 cnt-shardmap derive --now "$D1" --max-shards 3 "$D/w1.json"
	[[ $output == *"--max-shards: 3 is not a power of two"* ]]
	for o in "--target 0" "--target 2" "--merge-ratio 0.6" "--hold 5" "--max-shards 131072" "--now yesterday"; do
		run -2 cnt-shardmap derive --now "$D1" $o "$D/w1.json"
		[[ $output == "cnt-shardmap: ${o%% *}: "* ]]
	done
	run -2 cnt-shardmap show
	[[ $output == *"show takes one map file"* ]]
	run -2 cnt-window -d "$DEFS" --shards 4 --shard-map "$D/map.json" -o w.avro "$D/day1.avro"
	[[ $output == *"--shards and --shard-map exclude each other"* ]]
	run -0 cnt-shardmap --help
	[[ $output == *"usage: cnt-shardmap derive"* ]]
}
