// duck.mjs - the benchmark's DuckDB peer (tests/bench/peers.sh runs it).
//
//   node duck.mjs convert EVENTS.jsonl EVENTS.parquet
//   node duck.mjs run EVENTS.parquet TOP.tsv NOW
//
// convert: the generator's JSON lines to Parquet, once (not timed against
// the chain).  event_time is RFC 3339 or epoch milliseconds in the input;
// Parquet gets a TIMESTAMPTZ.
// run: the chain's job on 2 threads: drop duplicate keys (idempotency_key,
// or item + member_ref for vidco/views, as tests/bench/definitions.json
// declares); group by tenant, counter, member and local hour (acme in
// Europe/Berlin, vidco in America/New_York) with count, sum, min, max,
// latest event time, latest ingest time (NOW: every event is admitted by
// one cnt-ingest run at --now) and an approximate distinct count of items;
// then the all-time sum per member of acme/distance_m and its top 100 with
// competition ranks (value desc, earliest achiever, member_ref asc), written
// as "rank<TAB>member<TAB>value" lines.  Prints the number of groups.
import { DuckDBInstance } from '@duckdb/node-api';
import { writeFileSync } from 'node:fs';

const [mode, src, dst, now] = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const db = await inst.connect();
const q = (s) => s.replaceAll("'", "''");

if (mode === 'convert') {
	await db.run(`COPY (
	  SELECT tenant_id, counter_id, member_ref, CAST(delta AS BIGINT) AS delta, item, idempotency_key,
	    CASE WHEN regexp_full_match(event_time, '[0-9]+') THEN make_timestamp(CAST(event_time AS BIGINT) * 1000)::TIMESTAMPTZ
	         ELSE CAST(event_time AS TIMESTAMPTZ) END AS event_time
	  FROM read_json('${q(src)}', format = 'newline_delimited',
	    columns = {tenant_id: 'VARCHAR', counter_id: 'VARCHAR', member_ref: 'VARCHAR', delta: 'BIGINT',
	               item: 'VARCHAR', idempotency_key: 'VARCHAR', event_time: 'VARCHAR'})
	) TO '${q(dst)}' (FORMAT parquet)`);
} else if (mode === 'run') {
	await db.run(`CREATE TEMP TABLE groups AS
	  WITH kept AS (
	    SELECT tenant_id, counter_id, any_value(member_ref) AS member_ref, any_value(delta) AS delta,
	           any_value(item) AS item, any_value(event_time) AS event_time
	    FROM '${q(src)}'
	    GROUP BY tenant_id, counter_id,
	      CASE WHEN tenant_id = 'vidco' AND item IS NOT NULL THEN item || chr(0) || member_ref ELSE idempotency_key END
	  )
	  SELECT tenant_id, counter_id, member_ref,
	    date_trunc('hour', timezone(CASE tenant_id WHEN 'acme' THEN 'Europe/Berlin' ELSE 'America/New_York' END, event_time)) AS hour,
	    count(*) AS n, sum(delta) AS s, min(delta) AS lo, max(delta) AS hi, max(event_time) AS last_et,
	    TIMESTAMPTZ '${q(now)}' AS max_ingest, approx_count_distinct(item) AS uniq
	  FROM kept GROUP BY ALL`);
	const g = await db.runAndReadAll('SELECT count(*) AS n FROM groups');
	const top = await db.runAndReadAll(`
	  WITH m AS (
	    SELECT member_ref, sum(s) AS v, max(last_et) AS t FROM groups
	    WHERE tenant_id = 'acme' AND counter_id = 'distance_m' GROUP BY member_ref
	  )
	  SELECT rank() OVER (ORDER BY v DESC, t ASC) AS r, member_ref, v FROM m
	  ORDER BY v DESC, t ASC, member_ref ASC LIMIT 100`);
	writeFileSync(dst, top.getRows().map((r) => `${r[0]}\t${r[1]}\t${r[2]}`).join('\n') + '\n');
	console.log(`${g.getRows()[0][0]} groups`);
} else {
	console.error('usage: node duck.mjs convert EVENTS.jsonl EVENTS.parquet | run EVENTS.parquet TOP.tsv NOW');
	process.exit(2);
}
