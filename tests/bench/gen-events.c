/*
 * gen-events - write synthetic raw counting events for the cnt benchmarks.
 *
 * A standalone program (libc and libm only, not linked with lib/), so the
 * benchmark input never depends on the code being measured.  The output is
 * a pure function of the options: the same options give the same bytes on
 * any machine with an IEEE-754 libm (the Zipf sampler uses log/exp).
 *
 * What is generated, line by line:
 *
 *   counter mix      45 % acme/distance_m (exact, delta 1..5000)
 *                    15 % acme/workouts   (exact, delta 1)
 *                    40 % vidco/views     (unique, delta 1, item "v<n>",
 *                                          viewer n uniform in 1..4*members)
 *   member_ref       "m<k>", k Zipf-distributed over 1..members with
 *                    exponent s (default 1.0, --zipf-s), so "m1" is the
 *                    hottest key: its share is 1/H(members, s), about 6.9 %
 *                    for s = 1.0 and a million members.  Sampled by the
 *                    rejection-inversion method of Hormann and Derflinger
 *                    ("Rejection-inversion to generate variates from monotone
 *                    discrete distributions", ACM TOMACS 6(3), 1996), O(1)
 *                    per draw and no table.
 *   event_time       uniform over the (--days) days before --now, strictly
 *                    inside (now - days, now); RFC 3339 in UTC with 'Z' and
 *                    milliseconds on ~90 % of lines, integer epoch
 *                    milliseconds on ~10 %.
 *   attrs            {"region": eu|us|apac, "device": ios|android|web} on
 *                    ~95 % of lines, absent on the rest.
 *   idempotency_key  "k-<16 hex>": the splitmix64 sequence started at a
 *                    seed-derived state.  splitmix64 visits 2^64 distinct
 *                    outputs before repeating, so fresh keys never collide
 *                    and the number of duplicate keys is known exactly.
 *   duplicates       each line after the first is, with probability
 *                    --dup-rate, a client retry: a byte-identical copy of one
 *                    of the last 1024 original lines, chosen uniformly.
 *                    Hence: distinct keys = lines - duplicates, where
 *                    "duplicates" is exactly the number of retry lines;
 *                    --stats prints it (on stderr, one JSON object).
 *
 * Randomness is xoshiro256** seeded from --seed through splitmix64 (never
 * rand()).  Lines are about 200-240 bytes; they are formatted by hand into
 * a large buffer and written with fwrite, so ten million lines take a few
 * seconds.
 *
 * CSV (--csv) carries the same fields under a header row:
 *   idempotency_key,tenant_id,counter_id,member_ref,delta,item,event_time,
 *   origin,attrs.region,attrs.device
 * with empty cells for absent values.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECENT 1024          /* retries copy one of this many recent lines */
#define OUTBUF (1u << 22)    /* flush the line buffer at about 4 MiB */
#define MAXLINE 512

static const char *const usage_text =
	"usage: gen-events [-n count] [--members m] [--zipf-s s] [--dup-rate r]\n"
	"                  [--days d] [--now time] [--seed n] [--csv] [--stats]\n";

/* ---- random numbers ------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct rng { uint64_t s[4]; };

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

/* uniform in [0, 1) with 53 bits */
static double rng_double(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* uniform in [0, n), n > 0; Lemire's multiply-shift (bias < n / 2^64) */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* ---- Zipf by rejection-inversion ------------------------------------ */

/*
 * P(k) proportional to k^-s for k in 1..n.  h(x) = x^-s is the hat density;
 * H is its integral, written with the helpers below so that s = 1 (where H
 * becomes log x) needs no special case.  The layout follows Apache Commons
 * RNG's RejectionInversionZipfSampler.
 */
struct zipf {
	double s, n;
	double hx1;        /* H(1.5) - 1 */
	double hn;         /* H(n + 0.5) */
	double squeeze;    /* 2 - Hinv(H(2.5) - h(2)) */
};

static double helper1(double x) /* log1p(x) / x */
{
	return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

static double helper2(double x) /* expm1(x) / x */
{
	return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}

static double zipf_h(const struct zipf *z, double x)
{
	return exp(-z->s * log(x));
}

static double zipf_H(const struct zipf *z, double x)
{
	double lx = log(x);
	return helper2((1 - z->s) * lx) * lx;
}

static double zipf_Hinv(const struct zipf *z, double x)
{
	double t = x * (1 - z->s);
	if (t < -1)
		t = -1;
	return exp(helper1(t) * x);
}

static void zipf_init(struct zipf *z, double s, uint64_t n)
{
	z->s = s;
	z->n = (double)n;
	z->hx1 = zipf_H(z, 1.5) - 1;
	z->hn = zipf_H(z, z->n + 0.5);
	z->squeeze = 2 - zipf_Hinv(z, zipf_H(z, 2.5) - zipf_h(z, 2));
}

static uint64_t zipf_draw(const struct zipf *z, struct rng *r)
{
	for (;;) {
		double u = z->hn + rng_double(r) * (z->hx1 - z->hn);
		double x = zipf_Hinv(z, u);
		double k = floor(x + 0.5);
		if (k < 1)
			k = 1;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->squeeze || u >= zipf_H(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k;
	}
}

/* ---- formatting ------------------------------------------------------ */

enum { C_DISTANCE, C_WORKOUTS, C_VIEWS };

struct event {
	uint64_t key;
	uint64_t member;
	uint64_t item;      /* viewer number, views only */
	int64_t t_ms;
	int32_t delta;
	uint8_t counter;
	uint8_t region, device; /* 0 = no attrs, else 1-based */
	uint8_t epoch_time;     /* event_time as integer ms */
};

static const char *const tenant_of[] = { "acme", "acme", "vidco" };
static const char *const counter_of[] = { "distance_m", "workouts", "views" };
static const char *const regions[] = { "eu", "us", "apac" };
static const char *const devices[] = { "ios", "android", "web" };

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

static char *put_digits(char *p, unsigned v, int width)
{
	for (int i = width - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + width;
}

static char *put_hex16(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--) {
		p[i] = hex[v & 15];
		v >>= 4;
	}
	return p + 16;
}

/* days since 1970-01-01 to civil date (Howard Hinnant's algorithm) */
static void civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)(yy + (*m <= 2));
}

static int64_t days_from_civil(int y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* 2026-11-27T13:45:12.345Z */
static char *put_rfc3339(char *p, int64_t ms)
{
	int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
	unsigned msec = (unsigned)(ms - secs * 1000);
	int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
	unsigned sod = (unsigned)(secs - days * 86400);
	int y;
	unsigned mo, d;
	civil_from_days(days, &y, &mo, &d);
	p = put_digits(p, (unsigned)y, 4);
	*p++ = '-';
	p = put_digits(p, mo, 2);
	*p++ = '-';
	p = put_digits(p, d, 2);
	*p++ = 'T';
	p = put_digits(p, sod / 3600, 2);
	*p++ = ':';
	p = put_digits(p, sod / 60 % 60, 2);
	*p++ = ':';
	p = put_digits(p, sod % 60, 2);
	*p++ = '.';
	p = put_digits(p, msec, 3);
	*p++ = 'Z';
	return p;
}

static char *put_json(char *p, const struct event *e)
{
	p = put_str(p, "{\"idempotency_key\":\"k-");
	p = put_hex16(p, e->key);
	p = put_str(p, "\",\"tenant_id\":\"");
	p = put_str(p, tenant_of[e->counter]);
	p = put_str(p, "\",\"counter_id\":\"");
	p = put_str(p, counter_of[e->counter]);
	p = put_str(p, "\",\"member_ref\":\"m");
	p = put_u64(p, e->member);
	p = put_str(p, "\",");
	if (e->counter == C_VIEWS) {
		p = put_str(p, "\"item\":\"v");
		p = put_u64(p, e->item);
		p = put_str(p, "\",");
	}
	p = put_str(p, "\"delta\":");
	p = put_i64(p, e->delta);
	p = put_str(p, ",\"event_time\":");
	if (e->epoch_time) {
		p = put_i64(p, e->t_ms);
	} else {
		*p++ = '"';
		p = put_rfc3339(p, e->t_ms);
		*p++ = '"';
	}
	p = put_str(p, ",\"origin\":\"backend\"");
	if (e->region) {
		p = put_str(p, ",\"attrs\":{\"region\":\"");
		p = put_str(p, regions[e->region - 1]);
		p = put_str(p, "\",\"device\":\"");
		p = put_str(p, devices[e->device - 1]);
		p = put_str(p, "\"}");
	}
	*p++ = '}';
	*p++ = '\n';
	return p;
}

static const char csv_header[] =
	"idempotency_key,tenant_id,counter_id,member_ref,delta,item,"
	"event_time,origin,attrs.region,attrs.device\n";

static char *put_csv(char *p, const struct event *e)
{
	p = put_str(p, "k-");
	p = put_hex16(p, e->key);
	*p++ = ',';
	p = put_str(p, tenant_of[e->counter]);
	*p++ = ',';
	p = put_str(p, counter_of[e->counter]);
	p = put_str(p, ",m");
	p = put_u64(p, e->member);
	*p++ = ',';
	p = put_i64(p, e->delta);
	*p++ = ',';
	if (e->counter == C_VIEWS) {
		*p++ = 'v';
		p = put_u64(p, e->item);
	}
	*p++ = ',';
	p = e->epoch_time ? put_i64(p, e->t_ms) : put_rfc3339(p, e->t_ms);
	p = put_str(p, ",backend,");
	if (e->region) {
		p = put_str(p, regions[e->region - 1]);
		*p++ = ',';
		p = put_str(p, devices[e->device - 1]);
	} else {
		*p++ = ',';
	}
	*p++ = '\n';
	return p;
}

/* ---- options --------------------------------------------------------- */

struct opts {
	uint64_t n, members, seed;
	double zipf_s, dup_rate, days;
	int64_t now_ms;
	int csv, stats;
};

__attribute__((format(printf, 1, 2), noreturn))
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gen-events: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		die("%s: expected a non-negative integer", what);
	return (uint64_t)v;
}

static double parse_double(const char *s, const char *what)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		die("%s: expected a number", what);
	return v;
}

static int digits(const char **s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++, (*s)++) {
		if (**s < '0' || **s > '9')
			return -1;
		v = v * 10 + (**s - '0');
	}
	*out = v;
	return 0;
}

/* RFC 3339 (YYYY-MM-DDTHH:MM:SS[.fff...](Z|+hh:mm|-hh:mm)) or epoch ms */
static int64_t parse_time(const char *s)
{
	int y, mo, d, h, mi, se, ms = 0, oh = 0, om = 0, sign = 0;
	const char *p = s;
	if (*p == '-' || (*p >= '0' && *p <= '9' && !strchr(p, 'T') && !strchr(p, 't'))) {
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (errno || end == s || *end)
			die("--now '%s': expected RFC 3339 or epoch milliseconds", s);
		return v;
	}
	if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
	    digits(&p, 2, &d) || (*p != 'T' && *p != 't') || !*p++ ||
	    digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
	    digits(&p, 2, &se))
		goto bad;
	if (*p == '.') {
		int scale = 100, nd = 0;
		for (p++; *p >= '0' && *p <= '9'; p++, nd++) {
			ms += (*p - '0') * scale;
			scale /= 10;
		}
		if (!nd)
			goto bad;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
			goto bad;
	} else {
		goto bad;
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    se > 60 || oh > 23 || om > 59)
		goto bad;
	int64_t secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 +
		       h * 3600 + mi * 60 + se - sign * (oh * 3600 + om * 60);
	return secs * 1000 + ms;
bad:
	die("--now '%s': expected RFC 3339 (2026-11-30T00:00:00Z) or epoch milliseconds", s);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "members", required_argument, NULL, 'm' },
		{ "zipf-s", required_argument, NULL, 'z' },
		{ "dup-rate", required_argument, NULL, 'r' },
		{ "days", required_argument, NULL, 'd' },
		{ "now", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "csv", no_argument, NULL, 'c' },
		{ "stats", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct opts){ .n = 10000000, .members = 1000000, .seed = 1,
			    .zipf_s = 1.0, .dup_rate = 0.02, .days = 7,
			    .now_ms = parse_time("2026-11-30T00:00:00Z") };
	int c;
	while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->n = parse_u64(optarg, "-n"); break;
		case 'm': o->members = parse_u64(optarg, "--members"); break;
		case 'z': o->zipf_s = parse_double(optarg, "--zipf-s"); break;
		case 'r': o->dup_rate = parse_double(optarg, "--dup-rate"); break;
		case 'd': o->days = parse_double(optarg, "--days"); break;
		case 't': o->now_ms = parse_time(optarg); break;
		case 's': o->seed = parse_u64(optarg, "--seed"); break;
		case 'c': o->csv = 1; break;
		case 'S': o->stats = 1; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default: fputs(usage_text, stderr); exit(2);
		}
	}
	if (optind != argc)
		die("unexpected argument '%s'", argv[optind]);
	if (o->members < 1 || o->members > (1ULL << 40))
		die("%s", "--members: expected 1..2^40");
	if (!(o->zipf_s > 0) || o->zipf_s > 10)
		die("%s", "--zipf-s: expected a value in (0, 10]");
	if (!(o->dup_rate >= 0) || !(o->dup_rate < 1))
		die("%s", "--dup-rate: expected a value in [0, 1)");
	if (!(o->days > 0) || o->days > 36500)
		die("%s", "--days: expected a value in (0, 36500]");
}

/* ---- main ------------------------------------------------------------- */

static void flush(const char *buf, size_t len)
{
	if (len && fwrite(buf, 1, len, stdout) != len) {
		fprintf(stderr, "gen-events: write error: %s\n", strerror(errno));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	parse_opts(argc, argv, &o);

	struct rng rng;
	rng_seed(&rng, o.seed);
	uint64_t key_state = o.seed ^ 0x6b65792d73747265ULL; /* separate stream */
	struct zipf z;
	zipf_init(&z, o.zipf_s, o.members);

	int64_t span = (int64_t)(o.days * 86400000.0);
	if (span < 3)
		span = 3;
	/* dup decision as an integer threshold on 53 random bits */
	uint64_t dup_thresh = (uint64_t)(o.dup_rate * 0x1.0p53);
	uint64_t viewers = o.members * 4;

	static struct event recent[RECENT];
	uint64_t originals = 0, dups = 0, by_counter[3] = { 0, 0, 0 };
	uint64_t epoch_lines = 0, attr_lines = 0;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN;

	char *buf = malloc(OUTBUF + MAXLINE);
	if (!buf) {
		fputs("gen-events: out of memory\n", stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOFBF, 1u << 20);
	char *p = buf;
	if (o.csv)
		p = put_str(p, csv_header);

	for (uint64_t i = 0; i < o.n; i++) {
		struct event e;
		if (originals && (rng_next(&rng) >> 11) < dup_thresh) {
			uint64_t w = originals < RECENT ? originals : RECENT;
			uint64_t back = rng_below(&rng, w); /* 0 = most recent */
			e = recent[(originals - 1 - back) % RECENT];
			dups++;
		} else {
			uint64_t r = rng_next(&rng);
			uint64_t pick = r % 100;
			e.counter = pick < 45 ? C_DISTANCE : pick < 60 ? C_WORKOUTS : C_VIEWS;
			e.key = splitmix64(&key_state);
			e.member = zipf_draw(&z, &rng);
			e.item = e.counter == C_VIEWS ? 1 + rng_below(&rng, viewers) : 0;
			e.delta = e.counter == C_DISTANCE ? (int32_t)(1 + rng_below(&rng, 5000)) : 1;
			/* strictly inside (now - span, now) */
			e.t_ms = o.now_ms - span + 1 + (int64_t)rng_below(&rng, (uint64_t)span - 1);
			r = rng_next(&rng);
			e.epoch_time = (r & 1023) < 102;             /* ~10 % */
			if (((r >> 10) & 1023) < 973) {               /* ~95 % */
				e.region = (uint8_t)(1 + (r >> 20) % 3);
				e.device = (uint8_t)(1 + (r >> 30) % 3);
			} else {
				e.region = e.device = 0;
			}
			recent[originals % RECENT] = e;
			originals++;
		}
		by_counter[e.counter]++;
		epoch_lines += e.epoch_time;
		attr_lines += e.region != 0;
		if (e.t_ms < tmin)
			tmin = e.t_ms;
		if (e.t_ms > tmax)
			tmax = e.t_ms;
		p = o.csv ? put_csv(p, &e) : put_json(p, &e);
		if ((size_t)(p - buf) >= OUTBUF) {
			flush(buf, (size_t)(p - buf));
			p = buf;
		}
	}
	flush(buf, (size_t)(p - buf));
	free(buf);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "gen-events: write error: %s\n", strerror(errno));
		return 2;
	}
	if (o.stats) {
		char t0[40] = "null", t1[40] = "null";
		if (o.n) {
			char *q = t0;
			*q++ = '"';
			q = put_rfc3339(q, tmin);
			*q++ = '"';
			*q = 0;
			q = t1;
			*q++ = '"';
			q = put_rfc3339(q, tmax);
			*q++ = '"';
			*q = 0;
		}
		fprintf(stderr,
			"{\"tool\":\"gen-events\",\"lines\":%llu,\"duplicates\":%llu,"
			"\"distinct_keys\":%llu,\"seed\":%llu,\"members\":%llu,"
			"\"zipf_s\":%g,\"dup_rate\":%g,"
			"\"by_counter\":{\"acme/distance_m\":%llu,\"acme/workouts\":%llu,"
			"\"vidco/views\":%llu},\"epoch_ms_times\":%llu,\"with_attrs\":%llu,"
			"\"min_event_time\":%s,\"max_event_time\":%s}\n",
			(unsigned long long)o.n, (unsigned long long)dups,
			(unsigned long long)originals, (unsigned long long)o.seed,
			(unsigned long long)o.members, o.zipf_s, o.dup_rate,
			(unsigned long long)by_counter[0], (unsigned long long)by_counter[1],
			(unsigned long long)by_counter[2], (unsigned long long)epoch_lines,
			(unsigned long long)attr_lines, t0, t1);
	}
	return 0;
}
