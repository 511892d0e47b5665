/*
 * test_cap.c - lib/ingest/cap.h: the member cap and the members file.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/cap.h"
#include "unit.h"

static const char defs_text[] =
	"{\"format\":\"cnt-definitions/1\",\"tenants\":["
	"{\"tenant_id\":\"a\",\"timezone\":\"UTC\",\"member_cap\":2},"
	"{\"tenant_id\":\"b\",\"timezone\":\"UTC\"}]}";

static cnt_slice sl(const char *s)
{
	cnt_slice x = {s, strlen(s)};

	return x;
}

/* admits member m of t when the cap allows: 1 admitted, 0 over the cap */
static int admit(cnt_members *m, const cnt_tenant *t, const char *member)
{
	cnt_fp fp;

	if (cnt_members_check(m, t, sl(member), &fp))
		return 0;
	CHECK(cnt_members_add(m, t, fp) == 0);
	return 1;
}

/* m written to memory: malloc'd bytes, *n their length */
static unsigned char *dump(const cnt_members *m, size_t *n)
{
	char path[] = "/tmp/test_cap.XXXXXX";
	int fd = mkstemp(path);
	unsigned char *p = malloc(65536);
	cnt_err err;

	CHECK(fd >= 0 && p != NULL);
	CHECK(cnt_members_write(m, fd, path, &err) == 0);
	*n = (size_t)lseek(fd, 0, SEEK_CUR);
	CHECK(pread(fd, p, *n, 0) == (ssize_t)*n);
	close(fd);
	unlink(path);
	return p;
}

static void test_cap_and_file(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_text, strlen(defs_text), "t", &err);
	const cnt_tenant *a, *b;
	cnt_members *m, *m2;
	unsigned char *p, *p2;
	size_t n, n2;

	CHECK(d != NULL);
	if (d == NULL)
		return;
	a = cnt_defs_tenant(d, "a", 1);
	b = cnt_defs_tenant(d, "b", 1);
	CHECK(cnt_members_first_capped(d) == a);
	m = cnt_members_new(d, &err);
	CHECK(admit(m, a, "m1") && admit(m, a, "m2"));
	CHECK(!admit(m, a, "m3"));           /* beyond the cap */
	CHECK(admit(m, a, "m1"));            /* a member is never dropped */
	for (int i = 0; i < 100; i++) {      /* no cap: every member */
		char s[16];

		snprintf(s, sizeof(s), "x%d", i);
		CHECK(admit(m, b, s));
	}
	CHECK_EQ_INT(cnt_members_count(m, a), 2);
	CHECK_EQ_INT(cnt_members_rejected(m, a), 1);
	CHECK_EQ_INT(cnt_members_count(m, b), 100);

	/* round trip: the same members, the same bytes */
	p = dump(m, &n);
	CHECK_EQ_INT(n, 14 + 4 + (2 + 1 + 8 + 2 * 16) + (2 + 1 + 8 + 100 * 16) + 8);
	m2 = cnt_members_new(d, &err);
	CHECK(cnt_members_parse(m2, p, n, "f", &err) == 0);
	CHECK(!admit(m2, a, "m3") && admit(m2, a, "m2"));
	p2 = dump(m2, &n2);
	CHECK(n2 == n && memcmp(p, p2, n) == 0);
	cnt_members_free(m2);

	/* every single-byte corruption and every truncation is refused */
	for (size_t i = 0; i < n; i++) {
		p[i] ^= 0x40;
		m2 = cnt_members_new(d, &err);
		CHECK(cnt_members_parse(m2, p, n, "f", &err) == -1);
		cnt_members_free(m2);
		p[i] ^= 0x40;
		m2 = cnt_members_new(d, &err);
		CHECK(cnt_members_parse(m2, p, i, "f", &err) == -1);
		cnt_members_free(m2);
	}
	free(p);
	free(p2);
	cnt_members_free(m);
	cnt_defs_free(d);
}

/* A tenant the definitions no longer declare is kept as it was. */
static void test_foreign(void)
{
	static const char other[] = "{\"format\":\"cnt-definitions/1\",\"tenants\":["
		"{\"tenant_id\":\"b\",\"timezone\":\"UTC\"}]}";
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_text, strlen(defs_text), "t", &err);
	cnt_defs *d2 = cnt_defs_parse(other, strlen(other), "t", &err);
	cnt_members *m = cnt_members_new(d, &err), *m2 = cnt_members_new(d2, &err), *m3;
	unsigned char *p, *p2, *p3;
	size_t n, n2, n3;

	admit(m, cnt_defs_tenant(d, "a", 1), "m1");
	admit(m, cnt_defs_tenant(d, "b", 1), "m1");
	p = dump(m, &n);
	CHECK(cnt_members_parse(m2, p, n, "f", &err) == 0);
	p2 = dump(m2, &n2);
	CHECK(n2 == n && memcmp(p, p2, n) == 0);
	m3 = cnt_members_new(d, &err);
	CHECK(cnt_members_parse(m3, p2, n2, "f", &err) == 0);
	CHECK_EQ_INT(cnt_members_count(m3, cnt_defs_tenant(d, "a", 1)), 1);
	p3 = dump(m3, &n3);
	CHECK(n3 == n && memcmp(p, p3, n) == 0);
	free(p);
	free(p2);
	free(p3);
	cnt_members_free(m);
	cnt_members_free(m2);
	cnt_members_free(m3);
	cnt_defs_free(d);
	cnt_defs_free(d2);
}

int main(void)
{
	RUN(test_cap_and_file);
	RUN(test_foreign);
	return unit_report("test_cap");
}
