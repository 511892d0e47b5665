#!/usr/bin/env bats
# Scale-out (cnt-partition(1)): an archive split into N parts, each part
# counted apart with its own dedup state, and the parts' bucket files
# merged by cnt-accumulate into the bytes of the one-machine run; cnt-dedup's
# counts over the parts add up to the one-machine run's.  Then the same
# across two "hosts": two sshd of our own on loopback ports (generated host
# and client keys, a config of our own, the current user), driven by GNU
# parallel --sshlogin --transferfile --return --cleanup, as the man page's
# recipe says.  Both hosts are this machine, so the remote commands name
# the tools by the absolute path of this build.

bats_require_minimum_version 1.5.0
load data/core/common

NOW1=2026-03-01T12:01:00Z
NOW2=2026-03-01T12:31:00Z

# a free TCP port on 127.0.0.1 (bound, read, released)
free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_sshd N PORT: an sshd of our own in $SSH, listening on 127.0.0.1:PORT.
# Its sessions have HOME a directory of ours, $SSH/home, and start there (as
# a real host's start in the account's home directory): the remote shells
# read none of this machine's startup files (which can take half a second
# per connection, and parallel makes several per job), and parallel's work
# dirs (--workdir ...) are made there, apart from any other run of parallel
# on this machine.
start_sshd() {
	cat >"$SSH/sshd$1.conf" <<EOF
Port $2
ListenAddress 127.0.0.1
HostKey $SSH/hostkey
PidFile $SSH/sshd$1.pid
AuthorizedKeysFile $SSH/authorized_keys
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
SetEnv "HOME=$SSH/home"
ForceCommand cd "\$HOME" && eval "\$SSH_ORIGINAL_COMMAND"
EOF
	/usr/sbin/sshd -f "$SSH/sshd$1.conf" -E "$SSH/sshd$1.log"
}

setup_file() {
	local d=$BATS_FILE_TMPDIR i p1 p2
	# day 1: generated events, with retries, views and unique counters;
	# day 2: more, plus retries of day 1 (within the dedup horizon) and a
	# retry of a day-1 event naming another member.
	"$PY" "$DATA/gen-events.py" 7 2000 >"$d/day1.jsonl"
	"$PY" - "$d/day1.jsonl" >>"$d/day1.jsonl" <<'PYEOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for i, e in enumerate(lines[:300]):
    if e["counter_id"] == "dist" and e["tenant_id"] == "utc":
        print(json.dumps({"idempotency_key": "u-" + e["idempotency_key"], "tenant_id": "utc",
                          "counter_id": "uniq", "member_ref": e["member_ref"], "item": "i%d" % (i % 37),
                          "delta": 1, "event_time": e["event_time"]}))
PYEOF
	"$PY" "$DATA/gen-events.py" 8 1500 >"$d/day2.jsonl"
	sed -n '1~9p' "$d/day1.jsonl" >>"$d/day2.jsonl"
	jq -c 'select(.counter_id == "dist" and .tenant_id == "utc") | .member_ref = "other-" + .member_ref' \
		"$d/day1.jsonl" | head -n 20 >>"$d/day2.jsonl"
	cnt-ingest -d "$DEFS" --now "$NOW1" -o "$d/day1.avro" - <"$d/day1.jsonl" 2>/dev/null
	cnt-ingest -d "$DEFS" --now "$NOW2" -o "$d/day2.avro" - <"$d/day2.jsonl" 2>/dev/null
	# the one-machine run: both days through one dedup state, then merged
	for i in 1 2; do
		cnt-dedup -d "$DEFS" -s "$d/one.state" --stats "$d/one.dedup$i.json" "$d/day$i.avro" |
			cnt-window -d "$DEFS" | cnt-accumulate -o "$d/one.day$i.avro"
	done
	cnt-accumulate -o "$d/one.avro" "$d/one.day1.avro" "$d/one.day2.avro"

	# two sshd, the current user, keys of our own
	SSH=$d/ssh
	mkdir -p "$SSH" "$SSH/home"
	ssh-keygen -q -t ed25519 -N '' -C cnt-scaleout-host -f "$SSH/hostkey"
	ssh-keygen -q -t ed25519 -N '' -C cnt-scaleout-client -f "$SSH/clientkey"
	cp "$SSH/clientkey.pub" "$SSH/authorized_keys"
	# sshd started by root needs its privilege-separation directory (the
	# Debian package makes it when its service starts; we start none)
	if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then mkdir -p -m 0755 /run/sshd; fi
	p1=$(free_port)
	p2=$(free_port)
	start_sshd 1 "$p1"
	start_sshd 2 "$p2"
	cat >"$SSH/config" <<EOF
Host host1
	HostName 127.0.0.1
	Port $p1
Host host2
	HostName 127.0.0.1
	Port $p2
Host *
	User $(id -un)
	IdentityFile $SSH/clientkey
	IdentitiesOnly yes
	UserKnownHostsFile $SSH/known_hosts
	StrictHostKeyChecking accept-new
	BatchMode yes
	LogLevel ERROR
EOF
}

teardown_file() {
	local f
	for f in "$BATS_FILE_TMPDIR"/ssh/sshd*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	return 0
}

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	D=$BATS_FILE_TMPDIR
	SSH=$D/ssh
}

@test "every event in exactly one part, in input order; every part written, even empty; the same bytes every run" {
	mkdir p q
	cnt-partition -d "$DEFS" --parts 4 -o p/part --stats st.json "$D/day1.avro"
	for i in 0 1 2 3; do [ -f "p/part.$i.avro" ]; done
	[ ! -e p/part.4.avro ]
	ls -A p | grep -v '^part\.[0-3]\.avro$' && false
	n=$(cnt-cat --count "$D/day1.avro")
	one "(.tool == \"cnt-partition\") and .in == $n and .out == $n and .balanced and (.parts | length) == 4
		and (.parts | add) == $n and all(.parts[]; . > $n / 8) and .by_member + .by_key == $n
		and .by_member > 0 and .by_key > 0 and .undeclared == 0" st.json
	for i in 0 1 2 3; do
		[ "$(cnt-cat --count "p/part.$i.avro")" -eq "$(jq ".parts[$i]" st.json)" ]
	done
	# the parts together are the input, each in input order
	cnt-cat "$D/day1.avro" | jq -r .event_id >all.txt
	for i in 0 1 2 3; do cnt-cat "p/part.$i.avro" | jq -r .event_id >"got$i.txt"; done
	sort all.txt | cmp - <(sort got0.txt got1.txt got2.txt got3.txt)
	for i in 0 1 2 3; do grep -Fx -f "got$i.txt" all.txt | cmp - "got$i.txt"; done
	# deterministic: the same parts again, from standard input too
	cnt-partition -d "$DEFS" --parts 4 -o q/part <"$D/day1.avro"
	for i in 0 1 2 3; do cmp "p/part.$i.avro" "q/part.$i.avro"; done
	# one part is the input's events, in order
	cnt-partition -d "$DEFS" --parts 1 -o q/one "$D/day1.avro"
	cnt-cat q/one.0.avro | jq -r .event_id | cmp - all.txt
	# more parts than events: all written, the empty ones as empty containers
	cnt-ingest -d "$DEFS" --now "$NOW1" -o two.avro - < <(ev a dist m1 1; ev b dist m2 1) 2>/dev/null
	cnt-partition -d "$DEFS" --parts 7 -o q/few --codec null --stats few.json two.avro
	for i in 0 1 2 3 4 5 6; do cnt-cat --count "q/few.$i.avro"; done | paste -sd+ - | bc | grep -qx 2
	one '(.parts | add) == 2 and ([.parts[] | select(. == 0)] | length) >= 5' few.json
	cnt-cat --meta q/few.0.avro | grep -q null
}

@test "every duplicate meets its original: a retry naming another member is dropped in its part as on one machine" {
	cnt-ingest -d "$DEFS" --now "$NOW1" -o a.avro - < <(ev k1 dist m1 5; ev v1 views vid1 1 viewer1) 2>/dev/null
	# the same idempotency key under another member; a second view of
	# (vid1, viewer1) under another key
	cnt-ingest -d "$DEFS" --now "$NOW2" -o b.avro - < <(ev k1 dist m2 7; ev v2 views vid1 1 viewer1) 2>/dev/null
	cnt-dedup -d "$DEFS" --stats one.json a.avro b.avro -o kept.avro
	one '.in == 4 and .out == 2 and .duplicates == 2' one.json
	[ "$(keys_of kept.avro)" = k1,v1 ]
	for n in 2 3 5 8 13; do
		cnt-partition -d "$DEFS" --parts "$n" -o "p$n" --stats "st$n.json" a.avro b.avro
		one '.by_member == 2 and .by_key == 2' "st$n.json"
		dups=0 kept=""
		for ((i = 0; i < n; i++)); do
			cnt-dedup -d "$DEFS" --stats d.json "p$n.$i.avro" -o k.avro
			dups=$((dups + $(jq .duplicates d.json)))
			kept="$kept$(keys_of k.avro | tr -d ,)"
		done
		[ "$dups" -eq 2 ]
		[[ $kept == k1v1 || $kept == v1k1 ]]
	done
}

# chain PART STATE OUT: the counting chain over one part with its own state
chain() {
	cnt-dedup -d "$DEFS" -s "$2" --stats "$3.dedup.json" "$1" | cnt-window -d "$DEFS" | cnt-accumulate -o "$3"
}

@test "parts counted apart, each with its own dedup state over two days, merge into the one-machine bytes; dedup counts add up" {
	for day in 1 2; do
		cnt-partition -d "$DEFS" --parts 3 -o "day$day" "$D/day$day.avro"
		for i in 0 1 2; do chain "day$day.$i.avro" "part$i.state" "b.day$day.$i.avro"; done
	done
	cnt-accumulate -o merged.avro b.day*.avro
	cmp merged.avro "$D/one.avro"
	# in any order, and day by day
	cnt-accumulate -o m2.avro b.day2.2.avro b.day1.0.avro b.day2.0.avro b.day1.2.avro b.day2.1.avro b.day1.1.avro
	cmp m2.avro "$D/one.avro"
	for day in 1 2; do
		cnt-accumulate -o "d$day.avro" b.day$day.*.avro
		cmp "d$day.avro" "$D/one.day$day.avro"
		jq -s '{in: map(.in) | add, out: map(.out) | add, duplicates: map(.duplicates) | add,
			rejected: map(.rejected) | add}' b.day$day.*.avro.dedup.json >sum.json
		jq '{in, out, duplicates, rejected}' "$D/one.dedup$day.json" | cmp - <(jq . sum.json)
	done
	# the cross-day retries were found through the parts' states
	one '.duplicates > 20' "$D/one.dedup2.json"
	# a member of an idempotency-keyed counter is spread over the parts
	# (summed by the merge); a view counter's member is in one part
	[ "$(for i in 0 1 2; do cnt-cat "day1.$i.avro" | jq -r 'select(.counter_id == "dist") | .member_ref' | sort -u; done |
		sort | uniq -d | wc -l)" -gt 0 ]
	[ "$(for i in 0 1 2; do cnt-cat "day1.$i.avro" | jq -r 'select(.counter_id == "views") | .member_ref' | sort -u; done |
		sort | uniq -d | wc -l)" -eq 0 ]
}

@test "across two sshd: parallel --sshlogin --transferfile --return --cleanup counts the parts remotely; the merge is the one-machine run" {
	BIN=$(dirname "$(command -v cnt-dedup)")
	case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
	export PARALLEL_HOME=$BATS_TEST_TMPDIR/parallel-home
	mkdir -p "$PARALLEL_HOME"
	cp "$DEFS" defs.json
	ssh -F "$SSH/config" host1 true
	ssh -F "$SSH/config" host2 true
	# the sessions start in a home of their own, where the work dirs go
	[ "$(ssh -F "$SSH/config" host1 pwd)" = "$SSH/home" ]
	for day in 1 2; do
		cnt-partition -d defs.json --parts 4 -o "day$day" "$D/day$day.avro"
		# the state of part i travels with it: sent when it exists,
		# brought back with the bucket file
		for i in 0 1 2 3; do echo "$i"; done |
			parallel --will-cite --env PARALLEL_HOME --ssh "ssh -F $SSH/config" --sshlogin 1/host1,1/host2 \
				--workdir ... --transferfile defs.json --transferfile "day$day.{}.avro" \
				--transferfile "part{}.state" --return "b.day$day.{}.avro" --return "part{}.state" --cleanup \
				"$BIN/cnt-dedup -d defs.json -s part{}.state day$day.{}.avro |
				 $BIN/cnt-window -d defs.json | $BIN/cnt-accumulate -o b.day$day.{}.avro" 2>err.txt ||
			{ cat err.txt; false; }
	done
	ls b.day1.{0,1,2,3}.avro b.day2.{0,1,2,3}.avro part{0,1,2,3}.state
	cnt-accumulate -o merged.avro b.day*.avro
	cmp merged.avro "$D/one.avro"
	# both hosts took jobs, and no work dir (--workdir ...) was left behind
	grep -q 'Accepted publickey' "$SSH/sshd1.log"
	grep -q 'Accepted publickey' "$SSH/sshd2.log"
	[ ! -e "$SSH/home/.parallel/tmp" ] || [ -z "$(ls -A "$SSH/home/.parallel/tmp")" ] ||
		{ echo "work dirs left behind:"; find "$SSH/home"; cat err.txt; false; }
}

@test "usage errors: definitions, --parts and the prefix are required; numbers are strict" {
	run -2 cnt-partition --parts 2 -o p "$D/day1.avro"
	[[ $output == *"-d definitions is required"* ]]
	run -2 cnt-partition -d "$DEFS" -o p "$D/day1.avro"
	[[ $output == *"--parts N is required"* ]]
	run -2 cnt-partition -d "$DEFS" --parts 2 "$D/day1.avro"
	[[ $output == *"-o prefix is required"* ]]
	run -2 cnt-partition -d "$DEFS" --parts 2 -o - "$D/day1.avro"
	for bad in 0 2x -1 4097; do
		run -2 cnt-partition -d "$DEFS" --parts "$bad" -o p "$D/day1.avro"
		[[ $output == "cnt-partition: --parts: "* ]]
	done
	# an input that is not an event file: status 2, no part left behind
	run -2 cnt-partition -d "$DEFS" --parts 2 -o p "$DEFS"
	[ -z "$(ls -A)" ]
	# a directory that does not exist: status 2, as every tool
	run -2 cnt-partition -d "$DEFS" --parts 2 -o nowhere/p "$D/day1.avro"
	[ -z "$(ls -A)" ]
}

@test "--stats is valid JSON with ids holding a quote, a backslash and control characters; undeclared events are routed, not dropped" {
	weird_ids defs.json ev.avro
	cnt-partition -d defs.json --parts 3 -o p --stats st.json ev.avro
	"$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' st.json
	one '.in == 3 and .out == 3 and .undeclared == 1 and (.parts | add) == 3' st.json
	cnt-partition -d defs.json --parts 3 -o p --stats - ev.avro 2>err.json
	one '.in == 3' err.json
	# the undeclared event is rejected downstream, as on one machine
	for i in 0 1 2; do cnt-dedup -d defs.json -r "rej$i.jsonl" -o /dev/null "p.$i.avro"; done
	[ "$(cat rej0.jsonl rej1.jsonl rej2.jsonl | jq -r .reason)" = unknown_tenant ]
}
