#!/usr/bin/env bats
# Signed client events (cnt-keyring(5), cnt-sign(1), cnt-ingest(1)
# --keyring): the test vectors against the implementation and against an
# independent one (tests/sigref.py, python3-cryptography), every rejection
# reason, rotation across a batch, revocation, a tampered field of each
# kind, backend events signed and unsigned, the conservation line, keyring
# and key file errors, and cnt-sign's own behaviour.  Keys are made from
# fixed seeds so that every signature is reproducible.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/.."
PY=/usr/bin/python3
REF="$ROOT/tests/sigref.py"
NOW=2026-03-01T12:00:00Z
command -v cnt-sign >/dev/null 2>&1 || PATH="$ROOT/build/bin:$PATH"

# seeds: k1 (RFC 8032 test 1), k2, kb (backend)
S1=nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=
S2=JycnJycnJycnJycnJycnJycnJycnJycnJycnJycnJyc=
SB=vr6+vr6+vr6+vr6+vr6+vr6+vr6+vr6+vr6+vr6+vr4=

setup() {
	set -o pipefail
	cd "$BATS_TEST_TMPDIR"
	cat >defs.json <<'JSON'
{"format": "cnt-definitions/1",
 "tenants": [{"tenant_id": "acme", "timezone": "UTC"}, {"tenant_id": "acme2", "timezone": "UTC"}],
 "counters": [
  {"tenant_id": "acme", "counter_id": "steps", "versions": [{"version": 1, "type": "exact", "client_writable": true}]},
  {"tenant_id": "acme", "counter_id": "steps2", "versions": [{"version": 1, "type": "exact", "client_writable": true}]},
  {"tenant_id": "acme2", "counter_id": "steps", "versions": [{"version": 1, "type": "exact", "client_writable": true}]}]}
JSON
	key acme k1 "$S1" >k1.key
	key acme k2 "$S2" >k2.key
	key acme kb "$SB" >kb.key
	key acme2 k1 "$S1" >k1-acme2.key
	P1=$("$PY" "$REF" public "$S1")
	P2=$("$PY" "$REF" public "$S2")
	PB=$("$PY" "$REF" public "$SB")
	# k1 until 2026-03-01T00:00Z, k2 from then on, kb for backend events;
	# acme2 registers the same k1 (so a tenant change is a bad signature)
	ring "$(entry k1 "$P1" client 2026-01-01T00:00:00Z 2026-03-01T00:00:00Z)" \
		"$(entry k2 "$P2" client 2026-03-01T00:00:00Z)" \
		"$(entry kb "$PB" backend 2026-01-01T00:00:00Z)" >ring.json
}

key() { printf '{"tenant_id": "%s", "key_id": "%s", "seed": "%s"}\n' "$1" "$2" "$3"; }
# entry ID PUB ORIGIN FROM [UNTIL [REVOKED]]
entry() {
	jq -nc --arg id "$1" --arg pk "$2" --arg o "$3" --arg f "$4" --arg u "${5:-}" --arg r "${6:-}" \
		'{key_id: $id, public_key: $pk, origins: [$o], valid_from: $f}
		 + (if $u == "" then {} else {valid_until: $u} end)
		 + (if $r == "" then {} else {revoked_at: $r} end)'
}
ring() {
	local IFS=,
	printf '{"tenants": [{"tenant_id": "acme", "keys": [%s]}, {"tenant_id": "acme2", "keys": [%s]}]}\n' "$*" "$1"
}
# ev KEY TIME [ORIGIN]: one acme/steps event of member m-KEY at TIME
ev() {
	local o=${3:-client}
	jq -nc --arg k "$1" --arg t "$2" --arg o "$o" '{idempotency_key: $k, tenant_id: "acme", counter_id: "steps",
		member_ref: "m-1", delta: 5, event_time: $t, origin: $o} + (if $o == "client" then {subject: "m-1"} else {} end)'
}
ingest() { cnt-ingest -d defs.json --now "$NOW" -o out.avro -r rej.jsonl --stats st.json "$@"; }
# reasons: the reject stream's reasons, one per line
reasons() { jq -r .reason rej.jsonl; }
balanced() { jq -e '.balanced == true and .in == .out + .rejected + .duplicates + .held' st.json >/dev/null; }

@test "test vectors: cnt-keyring(5)'s canonical bytes and signatures are the implementation's and an independent one's" {
	# the vectors as the man page prints them (folded hex joined)
	"$PY" - "$ROOT/man/cnt-keyring.5" <<'PY' >vectors.tsv
import re, sys
t = open(sys.argv[1]).read()
seed = re.search(r'"seed": "([^"]+)"', t).group(1)
pub = re.search(r'"public_key": "([^"]+)"', t).group(1)
for n in (1, 2):
    ev = re.search(r'man-examples: file v%d.jsonl\n.Bd -literal -offset indent\n(.*)\n' % n, t).group(1)
    hx = re.search(r'\$ cnt-sign --canonical v%d.jsonl\n((?:[0-9a-f]+\n)+)' % n, t).group(1).replace("\n", "")
    sig = re.search(r'\$ cnt-sign --key vec.key v%d.jsonl \| jq -r .signature\n(\S+)\n' % n, t).group(1)
    print("\t".join([seed, pub, ev, hx, sig]))
PY
	[ "$(wc -l <vectors.tsv)" -eq 2 ]
	while IFS=$'\t' read -r seed pub e hx sig; do
		key acme acme-app-2026 "$seed" >vec.key
		# the implementation
		[ "$(printf '%s\n' "$e" | cnt-sign --canonical)" = "$hx" ]
		[ "$(printf '%s\n' "$e" | cnt-sign --key vec.key | jq -r .signature)" = "$sig" ]
		[ "$(cnt-sign --key vec.key --public --valid-from 0 | jq -r .public_key)" = "$pub" ]
		# the independent implementation
		[ "$("$PY" "$REF" canon "$e")" = "$hx" ]
		[ "$("$PY" "$REF" sign "$seed" acme-app-2026 "$e")" = "$sig" ]
		[ "$("$PY" "$REF" public "$seed")" = "$pub" ]
	done <vectors.tsv
	# RFC 8032's public key for that seed
	[ "$(cut -f2 vectors.tsv | head -n 1 | base64 -d | od -An -tx1 | tr -d ' \n')" = d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a ]
}

@test "signatures from cnt-sign verify with python3-cryptography, and python's verify with cnt-ingest" {
	{ ev a 2026-03-01T10:00:00Z; ev b 2026-03-01T11:00:00Z; } | cnt-sign --key k2.key >signed.jsonl
	while read -r line; do "$PY" "$REF" verify "$P2" "$line"; done <signed.jsonl
	# signed by python, admitted by cnt-ingest
	e=$(ev c 2026-03-01T11:30:00Z)
	jq -c --arg s "$("$PY" "$REF" sign "$S2" k2 "$e")" '.signature = $s' <<<"$e" >py.jsonl
	ingest --keyring ring.json py.jsonl
	jq -e '.out == 1 and .rejected == 0' st.json
}

@test "a signed client event is admitted; its signature goes to the log; the conservation line balances" {
	ev a 2026-03-01T10:00:00Z | cnt-sign --key k2.key >s.jsonl
	ingest --keyring ring.json s.jsonl
	balanced
	jq -e '.in == 1 and .out == 1 and .rejected == 0' st.json
	[ "$(cnt-cat out.avro | jq -r .signature)" = "$(jq -r .signature s.jsonl)" ]
}

@test "unsigned: a client-origin event without a signature, with or without a keyring" {
	ev a 2026-03-01T10:00:00Z >u.jsonl
	run --separate-stderr ingest --keyring ring.json u.jsonl
	[ "$status" -eq 0 ]
	[ "$(reasons)" = unsigned ]
	jq -e '.field == "signature" and (.message | test("must be signed"))' rej.jsonl
	jq -e '.rejected_by_reason.unsigned == 1 and .out == 0' st.json
	balanced
	ingest u.jsonl
	[ "$(reasons)" = unsigned ]
}

@test "bad_signature: a malformed field, each way" {
	ev a 2026-03-01T10:00:00Z | cnt-sign --key k2.key >s.jsonl
	good=$(jq -r .signature s.jsonl)
	for bad in c2lnbmVk "ed25519:k2" "ed25519::${good#ed25519:k2:}" "ed25519:k/2:${good#ed25519:k2:}" \
		"${good%=}" "${good}A" "${good:0:40} ${good:41}" "" "ED25519:${good#ed25519:}"; do
		jq -c --arg s "$bad" '.signature = $s' s.jsonl
	done >bad.jsonl
	ingest --keyring ring.json bad.jsonl
	[ "$(reasons | sort | uniq -c | awk '{print $1, $2}')" = "9 bad_signature" ]
	jq -r .message rej.jsonl | sort -u >msgs
	grep -q "does not start with 'ed25519:'" msgs
	grep -q "no ':' after its key id" msgs
	grep -q "key id is not 1 to 64 characters" msgs
	grep -q "is not 64 bytes in base64" msgs
	balanced
}

@test "bad_signature: each canonical field changed after signing" {
	# backend-origin events signed with a backend key, so that subject and
	# member_ref can change alone (a client event's subject must be its
	# member_ref); client ones for the fields that can change alone
	e=$(jq -c '.subject = "m-1" | .item = "it"' <<<"$(ev t 2026-03-01T10:00:00Z backend)")
	printf '%s\n' "$e" | cnt-sign --key kb.key >b.jsonl
	key acme2 kb "$SB" >kb2.key
	for f in '.tenant_id = "acme2"' '.counter_id = "steps2"' '.member_ref = "m-2"' '.subject = "m-2"' \
		'.delta = 6' '.item = "iu"' '.event_time = "2026-03-01T10:00:01Z"' '.idempotency_key = "u"' \
		'del(.subject)' 'del(.item)' '.delta = -5'; do
		jq -c "$f" b.jsonl
	done >tampered.jsonl
	# acme2 registers kb too, so the tenant change is judged by the signature
	jq --argjson k "$(entry kb "$PB" backend 2026-01-01T00:00:00Z)" '.tenants[1].keys += [$k]' ring.json >ring2.json
	ingest --keyring ring2.json b.jsonl tampered.jsonl
	jq -e '.in == 12 and .out == 1 and .rejected == 11 and .rejected_by_reason.bad_signature == 11' st.json
	[ "$(jq -r '.message' rej.jsonl | sort -u)" = "the signature does not verify under key 'kb' (an event field was changed after signing, or another key signed it)" ]
	# a client event: delta, event_time, idempotency key, counter, member and subject together
	ev c 2026-03-01T10:00:00Z | cnt-sign --key k2.key >c.jsonl
	for f in '.delta = 6' '.event_time = "2026-03-01T10:00:00.001Z"' '.idempotency_key = "d"' \
		'.counter_id = "steps2"' '.member_ref = "m-2" | .subject = "m-2"' '.item = "x"'; do
		jq -c "$f" c.jsonl
	done >ct.jsonl
	ingest --keyring ring.json ct.jsonl
	[ "$(reasons | sort | uniq -c | awk '{print $1, $2}')" = "6 bad_signature" ]
	# what is not signed may change: attrs and the text of the line
	jq -c '.attrs = {"region": "eu"} | .event_time = "2026-03-01T11:00:00+01:00"' c.jsonl >same.jsonl
	ingest --keyring ring.json same.jsonl
	jq -e '.out == 1' st.json
}

@test "unknown_key: no keyring, a key the tenant did not register, a key not registered for the origin" {
	ev a 2026-03-01T10:00:00Z | cnt-sign --key k2.key >s.jsonl
	ingest s.jsonl
	[ "$(reasons)" = unknown_key ]
	jq -e '.message == "key '"'"'k2'"'"' is unknown: no keyring was given (--keyring)"' rej.jsonl
	key acme k9 "$S2" >k9.key
	ev b 2026-03-01T10:00:00Z | cnt-sign --key k9.key >s9.jsonl
	ingest --keyring ring.json s9.jsonl
	jq -e '.reason == "unknown_key" and .message == "tenant '"'"'acme'"'"' registered no key '"'"'k9'"'"'"' rej.jsonl
	# kb is for backend events only; k2 for client events only
	ev c 2026-03-01T10:00:00Z | cnt-sign --key kb.key >sb.jsonl
	ev d 2026-03-01T10:00:00Z backend | cnt-sign --key k2.key >>sb.jsonl
	ingest --keyring ring.json sb.jsonl
	[ "$(jq -r .message rej.jsonl)" = "key 'kb' of tenant 'acme' is not registered for client-origin events
key 'k2' of tenant 'acme' is not registered for backend-origin events" ]
	jq -e '.rejected_by_reason.unknown_key == 2' st.json
}

@test "expired_key: event_time before valid_from or at/after valid_until" {
	{ ev a 2025-12-31T23:59:59.999Z; ev b 2026-03-01T00:00:00Z; } | cnt-sign --key k1.key >old.jsonl
	ev c 2026-02-28T12:00:00Z | cnt-sign --key k2.key >new.jsonl
	ingest --keyring ring.json --max-past 400d old.jsonl new.jsonl
	[ "$(reasons | sort | uniq -c | awk '{print $1, $2}')" = "3 expired_key" ]
	jq -r .message rej.jsonl >msgs
	grep -qxF "event_time is outside key 'k1''s validity [2026-01-01T00:00:00.000Z, 2026-03-01T00:00:00.000Z)" msgs
	grep -qxF "event_time is outside key 'k2''s validity [2026-03-01T00:00:00.000Z, (open))" msgs
	balanced
}

@test "rotation across a batch: the old key before its valid_until, the new one after, all admitted; the old one after, expired" {
	{ ev a 2026-02-28T23:00:00Z; ev b 2026-02-28T23:59:59.999Z; } | cnt-sign --key k1.key >batch.jsonl
	{ ev c 2026-03-01T00:00:00Z; ev d 2026-03-01T09:00:00Z; } | cnt-sign --key k2.key >>batch.jsonl
	ev e 2026-03-01T00:00:00Z | cnt-sign --key k1.key >>batch.jsonl
	ev f 2026-02-28T22:00:00Z | cnt-sign --key k1.key >>batch.jsonl
	ingest --keyring ring.json batch.jsonl
	jq -e '.in == 6 and .out == 5 and .rejected == 1 and .rejected_by_reason.expired_key == 1' st.json
	[ "$(jq -r '.raw | fromjson | .idempotency_key' rej.jsonl)" = e ]
	[ "$(cnt-cat out.avro | jq -r .idempotency_key | tr -d '\n')" = abcdf ]
	balanced
}

@test "revoked_key: from revoked_at on (ingest time), whatever the event_time; admitted before" {
	ring "$(entry k2 "$P2" client 2026-01-01T00:00:00Z '' 2026-03-01T12:00:00Z)" >revoked.json
	ev a 2026-02-01T00:00:00Z | cnt-sign --key k2.key >s.jsonl
	cnt-ingest -d defs.json --now 2026-03-01T11:59:59.999Z --max-past 60d --keyring revoked.json -o out.avro -r rej.jsonl s.jsonl
	[ ! -s rej.jsonl ]
	ingest --max-past 60d --keyring revoked.json s.jsonl
	[ "$(reasons)" = revoked_key ]
	jq -e '.message == "key '"'"'k2'"'"' of tenant '"'"'acme'"'"' was revoked at 2026-03-01T12:00:00.000Z"' rej.jsonl
	jq -e '.rejected_by_reason.revoked_key == 1' st.json
	# a revoked key's bad signature is a bad signature
	jq -c '.delta = 9' s.jsonl >t.jsonl
	ingest --max-past 60d --keyring revoked.json t.jsonl
	[ "$(reasons)" = bad_signature ]
}

@test "backend events: trusted unsigned; a signature is verified like a client one" {
	ev a 2026-03-01T10:00:00Z backend >b.jsonl
	jq -c 'del(.origin) | .idempotency_key = "a2"' b.jsonl >>b.jsonl
	ingest b.jsonl
	jq -e '.out == 2 and .rejected == 0' st.json
	ingest --keyring ring.json b.jsonl
	jq -e '.out == 2 and .rejected == 0' st.json
	cnt-sign --key kb.key b.jsonl >bs.jsonl
	ingest --keyring ring.json bs.jsonl
	jq -e '.out == 2' st.json
	[ "$(cnt-cat out.avro | jq -r '.signature | startswith("ed25519:kb:")' | sort -u)" = true ]
	# signed but no keyring, and a bad signature: rejected
	ingest bs.jsonl
	[ "$(reasons | sort | uniq -c | awk '{print $1, $2}')" = "2 unknown_key" ]
	jq -c '.delta = 7' bs.jsonl >bt.jsonl
	ingest --keyring ring.json bt.jsonl
	[ "$(reasons | sort | uniq -c | awk '{print $1, $2}')" = "2 bad_signature" ]
	balanced
}

@test "the checks before the signature still come first; every reason is in --stats" {
	ev a 2026-03-01T10:00:00Z | jq -c 'del(.subject)' >x.jsonl
	ingest --keyring ring.json x.jsonl
	[ "$(reasons)" = subject_mismatch ]
	for r in unsigned bad_signature unknown_key expired_key revoked_key; do
		jq -e --arg r "$r" '.rejected_by_reason | has($r)' st.json
	done
	[ "$(jq -r '[.rejected_by_reason | keys_unsorted[] | select(IN("unsigned", "bad_signature", "unknown_key", "expired_key", "revoked_key"))] | join(" ")' st.json)" = "unsigned bad_signature unknown_key expired_key revoked_key" ]
}

@test "CSV and Avro inputs: the signature covers the event, not the text" {
	{ ev a 2026-03-01T10:00:00Z; ev b 2026-03-01T10:30:00Z; } | cnt-sign --key k2.key >s.jsonl
	{ echo idempotency_key,tenant_id,counter_id,member_ref,delta,event_time,origin,subject,signature
	  jq -r '[.idempotency_key, .tenant_id, .counter_id, .member_ref, .delta, .event_time, .origin, .subject, .signature] | @csv' s.jsonl
	} >s.csv
	ingest --keyring ring.json s.csv
	jq -e '.out == 2 and .rejected == 0' st.json
	cnt-cat --schema out.avro >/dev/null
}

@test "keyring errors: one line naming the file and the path, status 2, nothing written" {
	check() {
		printf '%s' "$1" >bad.json
		run --separate-stderr cnt-ingest -d defs.json --now "$NOW" --keyring bad.json -o o.avro /dev/null
		[ "$status" -eq 2 ]
		[ "$stderr" = "cnt-ingest: keyring 'bad.json': $2" ]
		[ ! -e o.avro ]
	}
	check '{"tenants": [{"tenant_id": "acme", "keys": [{"key_id": "k", "public_key": "AAAA"}]}]}' \
		'$.tenants[0].keys[0].public_key: expected an Ed25519 public key: 32 bytes in base64 (44 characters, padded)'
	check '{"tenants": []' "line 1 column 14: '}' expected near end of file"
	check '{"tenants": [], "extra": 1}' "\$: unknown key 'extra' (expected tenants)"
	check "$(ring "$(entry k1 "$P1" client 2026-01-01T00:00:00Z 2025-01-01T00:00:00Z)")" \
		'$.tenants[0].keys[0].valid_until: must be later than valid_from'
	run --separate-stderr cnt-ingest -d defs.json --keyring missing.json -o o.avro /dev/null
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-ingest: keyring 'missing.json': No such file or directory" ]
}

@test "cnt-sign --keygen: a 0600 key file, its keyring entry, never overwritten; usage errors" {
	run --separate-stderr cnt-sign --keygen --key-id app-1 --tenant 'a"b\c' -o new.key --valid-from 2026-01-01T00:00:00Z --valid-until 2027-01-01T00:00:00Z --origins client,backend
	[ "$status" -eq 0 ]
	[ "$(stat -c %a new.key)" = 600 ]
	jq -e '.tenant_id == "a\"b\\c" and .key_id == "app-1" and (.seed | length) == 44' new.key
	jq -e '.key_id == "app-1" and .origins == ["client", "backend"] and .valid_from == "2026-01-01T00:00:00.000Z"
		and .valid_until == "2027-01-01T00:00:00.000Z" and (.public_key | length) == 44' <<<"$output"
	[ "$(cnt-sign --key new.key --public --valid-from 2026-01-01T00:00:00Z --valid-until 2027-01-01T00:00:00Z --origins client,backend)" = "$output" ]
	# two keys are never the same
	cnt-sign --keygen --key-id app-2 --tenant acme -o new2.key >/dev/null
	[ "$(jq -r .seed new.key)" != "$(jq -r .seed new2.key)" ]
	before=$(cat new.key)
	run --separate-stderr cnt-sign --keygen --key-id app-1 --tenant acme -o new.key
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-sign: key file 'new.key' exists: a key is never overwritten" ]
	[ "$(cat new.key)" = "$before" ]
	for args in "--keygen --key-id x --tenant acme" "--keygen --key-id 'a b' --tenant acme -o z.key" \
		"--keygen --key-id x --tenant acme -o z.key --origins web" "" "--public" \
		"--keygen --key-id x --tenant acme -o z.key --valid-from 2026-02-01T00:00:00Z --valid-until 2026-01-01T00:00:00Z"; do
		eval "run --separate-stderr cnt-sign $args"
		[ "$status" -eq 2 ]
		[ -n "$stderr" ]
		[ ! -e z.key ]
	done
}

@test "cnt-sign: another tenant's event, a bad line, a bad key file: status 2 naming the place, nothing written" {
	{ ev a 2026-03-01T10:00:00Z; ev b 2026-03-01T10:00:00Z | jq -c '.tenant_id = "acme2"'; } >mixed.jsonl
	run --separate-stderr cnt-sign --key k2.key -o out.jsonl mixed.jsonl
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-sign: mixed.jsonl:2: tenant_id is not 'acme', the tenant of key 'k2'" ]
	[ ! -e out.jsonl ]
	printf '{"idempotency_key": 1}\n' >bad.jsonl
	run --separate-stderr cnt-sign --key k2.key bad.jsonl
	[ "$status" -eq 2 ]
	[[ "$stderr" == "cnt-sign: bad.jsonl:1: field 'idempotency_key'"* ]]
	printf '{"tenant_id": "acme", "key_id": "k", "seed": "AAAA"}' >bad.key
	run --separate-stderr cnt-sign --key bad.key mixed.jsonl
	[ "$status" -eq 2 ]
	[ "$stderr" = "cnt-sign: key file 'bad.key': \$.seed: expected 32 bytes in base64 (44 characters, padded)" ]
}

@test "cnt-sign: blank lines dropped, an existing signature replaced, --stats and -v" {
	{ ev a 2026-03-01T10:00:00Z | jq -c '.signature = "old"'; echo; echo '  '; ev b 2026-03-01T10:00:00Z; } >in.jsonl
	run --separate-stderr cnt-sign --key k2.key --stats st.json -v in.jsonl
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 2 ]
	[ "$(printf '%s\n' "$output" | jq -r '.signature | startswith("ed25519:k2:")' | sort -u)" = true ]
	[ "$stderr" = "cnt-sign: signed 2 events with key k2" ]
	jq -e '.tool == "cnt-sign" and .in == 2 and .out == 2 and .key_id == "k2"' st.json
}
