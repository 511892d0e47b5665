/*
 * gen-buckets - writes a bucket file of N members for the view benchmark:
 * one record per member ("m" + 8 digits, so name order is number order,
 * and the file is sorted), in one bucket, with Zipf-like values.  Linked
 * with the library (it writes through the bucket writer).
 *
 *   gen-buckets -n 10000000 -t acme -c distance_m --bucket 2026-11-23T00:00:00Z > b.avro
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/bucket.h"
#include "time/timefmt.h"

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
	long long n = 10000000;
	const char *tenant = "acme", *counter = "distance_m";
	int64_t bucket = 0;
	uint64_t seed = 42;
	cnt_err err;
	cnt_writer *w;
	char name[32];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-n") == 0)
			n = atoll(argv[i + 1]);
		else if (strcmp(argv[i], "-t") == 0)
			tenant = argv[i + 1];
		else if (strcmp(argv[i], "-c") == 0)
			counter = argv[i + 1];
		else if (strcmp(argv[i], "--bucket") == 0 && cnt_time_parse_arg(argv[i + 1], &bucket) != 0)
			return fprintf(stderr, "gen-buckets: bad --bucket\n"), 2;
	}
	w = cnt_bucket_writer_new(STDOUT_FILENO, "standard output", CNT_CODEC_ZSTD, 1, &err);
	if (w == NULL)
		return fprintf(stderr, "gen-buckets: %s\n", err.msg), 2;
	for (long long i = 1; i <= n; i++) {
		cnt_bucket b;
		uint64_t r = next(&seed);

		memset(&b, 0, sizeof(b));
		snprintf(name, sizeof(name), "m%08lld", i);
		b.tenant_id.p = tenant;
		b.tenant_id.n = strlen(tenant);
		b.counter_id.p = counter;
		b.counter_id.n = strlen(counter);
		b.counter_version = 1;
		b.member_ref.p = name;
		b.member_ref.n = strlen(name);
		b.bucket_start = bucket;
		b.bucket_end = bucket + 3600000;
		b.count = 1 + (int64_t)(r % 50);
		/* Heavy-tailed: a few members far ahead, most near the bottom. */
		b.sum = (cnt_i128)(int64_t)(1000000.0 / (double)(1 + r % 100000) + (double)(r >> 44));
		b.has_min = b.has_max = b.has_last = 1;
		b.min = 1;
		b.max = (int64_t)b.sum;
		b.last_event_time = bucket + (int64_t)(r % 3600000);
		b.max_ingest_time = bucket + 7200000;
		if (cnt_bucket_encode(&b, cnt_writer_buf(w)) != 0 || cnt_writer_commit(w, &err) != 0)
			return fprintf(stderr, "gen-buckets: %s\n", err.msg), 2;
	}
	if (cnt_writer_finish(w, &err) != 0 || cnt_writer_end_deferred(&err) != 0)
		return fprintf(stderr, "gen-buckets: %s\n", err.msg), 2;
	cnt_writer_free(w);
	return 0;
}
