/*
 * fuzz_tzif.c - libFuzzer target for the TZif reader and what is built on it.
 *
 * A zone file is outside input (TZDIR can point anywhere).  Whatever the
 * bytes, cnt_tz_parse() must return a zone or NULL with a message, never
 * crash, leak or read out of bounds; and a zone it accepts, however odd,
 * must keep the promises tz.h makes: every instant lies in its bucket, the
 * cursor agrees with the stateless lookup, buckets touch, the day window
 * contains the instant, and a wall time read off an instant maps back to an
 * instant no later than it.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "time/tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_instant(const cnt_tz *tz, cnt_tz_cursor *cur, int64_t t, int deep)
{
	int64_t tc = t < CNT_TZ_MIN_MS ? CNT_TZ_MIN_MS : t >= CNT_TZ_MAX_MS ? CNT_TZ_MAX_MS - 1 : t;
	int64_t b = cnt_tz_bucket_start(tz, t), e = cnt_tz_bucket_end(tz, t);
	cnt_tz_window w;
	cnt_civil c;
	int32_t off = cnt_tz_offset_s(tz, t);

	if (off < -89999 || off > 93599)
		__builtin_trap();
	if (!(b <= tc && tc < e && e - b <= CNT_TZ_BUCKET_MS))
		__builtin_trap();
	if (cnt_tz_cursor_bucket_start(cur, t) != b || cnt_tz_cursor_bucket_end(cur, t) != e)
		__builtin_trap();
	if (cnt_tz_bucket_start(tz, e - 1) != b)
		__builtin_trap();
	if (e < CNT_TZ_MAX_MS && cnt_tz_bucket_start(tz, e) != e)
		__builtin_trap();
	if (!deep)
		return;
	w = cnt_tz_day(tz, t);
	if (!(w.start_ms <= tc && tc < w.end_ms))
		__builtin_trap();
	w = cnt_tz_week(tz, t, (int)(t & 7));
	if (!(w.start_ms <= tc && tc < w.end_ms))
		__builtin_trap();
	w = cnt_tz_month(tz, t);
	if (!(w.start_ms <= tc && tc < w.end_ms))
		__builtin_trap();
	w = cnt_tz_last_days(tz, t, 30);
	w = cnt_tz_rolling(tz, t, 24 * CNT_TZ_BUCKET_MS);
	if (w.start_ms > w.end_ms)
		__builtin_trap();
	cnt_tz_to_civil(tz, t, &c);
	if (tc > CNT_TZ_MIN_MS + 4 * CNT_MS_PER_DAY && tc < CNT_TZ_MAX_MS - 4 * CNT_MS_PER_DAY &&
	    cnt_tz_local_to_utc(tz, &c, 0) > tc)
		__builtin_trap();
	(void)cnt_tz_local_to_utc(tz, &c, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int64_t fixed[] = {
		INT64_MIN, -INT64_C(62135596800000), -1, 0, INT64_C(1000000000000),
		INT64_C(1774745999999), INT64_C(2147483648000), INT64_C(4102444800000),
		INT64_C(253402300800000), INT64_MAX,
	};
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_tz *tz = cnt_tz_parse(data, size, "fuzz", &err);
	cnt_tz_cursor cur;
	int64_t t;
	size_t i;
	int deep = size <= 32768; /* local_to_utc scans at most 4096 intervals */

	if (tz == NULL) {
		if (err.msg[0] == '\0') /* every refusal says why */
			__builtin_trap();
		return 0;
	}
	cnt_tz_cursor_init(&cur, tz);
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		check_instant(tz, &cur, fixed[i], deep);
	/* instants taken from the input itself */
	for (i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t u;

		memcpy(&u, data + i, 8);
		check_instant(tz, &cur, (int64_t)(u >> 12) - (INT64_C(1) << 50), deep);
	}
	/* either side of the first transitions after 1900 */
	t = -INT64_C(2208988800000);
	for (i = 0; i < 64; i++) {
		t = cnt_tz_next_transition(tz, t);
		if (t >= CNT_TZ_MAX_MS)
			break;
		check_instant(tz, &cur, t - 1, deep);
		check_instant(tz, &cur, t, deep);
	}
	cnt_tz_free(tz);
	return 0;
}
