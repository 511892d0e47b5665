/*
 * cnt-sign - make signing keys and sign raw events (lib/ingest/sigform.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/cli.h"
#include "cli/sign_cli.h"
#include "ingest/input.h"
#include "ingest/sigform.h"
#include "time/timefmt.h"

static const char usage[] =
	"usage: cnt-sign --keygen --key-id id --tenant tenant -o keyfile\n"
	"                [--origins list] [--valid-from time] [--valid-until time]\n"
	"       cnt-sign --key keyfile --public [--origins list] [--valid-from time]\n"
	"                [--valid-until time]\n"
	"       cnt-sign --key keyfile [-o file] [--stats file] [-v]\n"
	"                [--progress | --no-progress] [file ...]\n"
	"       cnt-sign --canonical [-o file] [file ...]\n";

static const char help[] =
	"Make an Ed25519 signing key, or sign raw events (JSON lines) with one.\n"
	"\n"
	"      --keygen            make a key: write its key file (mode 0600) to -o and\n"
	"                          print its keyring entry (cnt-keyring(5))\n"
	"      --key-id ID         the new key's id (A-Z a-z 0-9 . _ -, at most 64)\n"
	"      --tenant ID         the tenant the new key signs for\n"
	"      --key FILE          the key file to sign with\n"
	"      --public            print the keyring entry of --key's key\n"
	"      --canonical         print each event's canonical bytes in hex\n"
	"      --origins LIST      origins the entry allows: client, backend or\n"
	"                          client,backend (default client)\n"
	"      --valid-from TIME   the entry's valid_from (default: now)\n"
	"      --valid-until TIME  the entry's valid_until (default: none)\n"
	"  -o, --output FILE       the key file, or the signed events (default: stdout)\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          accepted, no effect\n"
	"      --no-progress       accepted, no effect\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-sign(1) and cnt-keyring(5).\n";

enum { OPT_KEYGEN = CNT_OPT_TOOL_BASE, OPT_KEY_ID, OPT_TENANT, OPT_KEY, OPT_PUBLIC, OPT_ORIGINS,
	OPT_VALID_FROM, OPT_VALID_UNTIL, OPT_CANONICAL };

static void read_key(const char *path, cnt_sig_key *k)
{
	char text[4096];
	int fd = cnt_cli_open_in(path);
	cnt_err err;
	long n = cnt_input_read(fd, path, text, sizeof(text), &err);

	cnt_cli_close_in(fd);
	if (n < 0 || cnt_sig_key_parse(k, text, (size_t)n, path, &err) != 0)
		cnt_die_err(&err);
	sodium_memzero(text, sizeof(text));
}

static void print_entry(const cnt_sig_key *k, const char *origins, int64_t from, int64_t until)
{
	char pk[64], f[32], u[32];

	cnt_sig_b64_encode(k->public_key, sizeof(k->public_key), pk, sizeof(pk));
	cnt_time_format_rfc3339(from, f);
	cnt_cli_printf("{\"key_id\": \"%s\", \"public_key\": \"%s\", \"origins\": [%s], \"valid_from\": \"%s\"",
		k->key_id, pk, strcmp(origins, "client") == 0 ? "\"client\"" : strcmp(origins, "backend") == 0 ?
		"\"backend\"" : "\"client\", \"backend\"", f);
	if (until != INT64_MAX)
		cnt_cli_printf(", \"valid_until\": \"%s\"", cnt_time_format_rfc3339(until, u) ? u : "");
	cnt_cli_printf("}\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"keygen", no_argument, NULL, OPT_KEYGEN}, {"key-id", required_argument, NULL, OPT_KEY_ID},
		{"tenant", required_argument, NULL, OPT_TENANT}, {"key", required_argument, NULL, OPT_KEY},
		{"public", no_argument, NULL, OPT_PUBLIC}, {"origins", required_argument, NULL, OPT_ORIGINS},
		{"valid-from", required_argument, NULL, OPT_VALID_FROM},
		{"valid-until", required_argument, NULL, OPT_VALID_UNTIL},
		{"canonical", no_argument, NULL, OPT_CANONICAL}, {"output", required_argument, NULL, 'o'},
		CNT_CLI_LONGOPTS, {NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *key_id = NULL, *tenant = NULL, *key_path = NULL, *out_path = NULL, *origins = "client";
	int keygen = 0, public = 0, canonical = 0, c;
	int64_t from = INT64_MIN, until = INT64_MAX;
	unsigned char seed[CNT_SIG_SEED_BYTES];
	char text[1024];
	cnt_sig_key k;
	cnt_out out;
	cnt_err err;

	cnt_cli_init("cnt-sign", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "o:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case OPT_KEYGEN: keygen = 1; break;
		case OPT_KEY_ID: key_id = optarg; break;
		case OPT_TENANT: tenant = optarg; break;
		case OPT_KEY: key_path = optarg; break;
		case OPT_PUBLIC: public = 1; break;
		case OPT_CANONICAL: canonical = 1; break;
		case OPT_ORIGINS:
			if (strcmp(optarg, "client") && strcmp(optarg, "backend") && strcmp(optarg, "client,backend"))
				cnt_die_usage("--origins: '%s' is not client, backend or client,backend", optarg);
			origins = optarg;
			break;
		case OPT_VALID_FROM: from = cnt_cli_time("--valid-from", optarg); break;
		case OPT_VALID_UNTIL: until = cnt_cli_time("--valid-until", optarg); break;
		case 'o': out_path = optarg; break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (keygen + public + canonical + (key_path != NULL && !public) != 1)
		cnt_die_usage("give one of --keygen, --key FILE --public, --key FILE to sign, or --canonical");
	if (public && key_path == NULL)
		cnt_die_usage("--public needs --key FILE");
	if (canonical)
		return cnt_sign_main(NULL, argv + optind, argc - optind, out_path, &co);
	if (from == INT64_MIN)
		from = (int64_t)time(NULL) * 1000;
	if (until != INT64_MAX && until <= from)
		cnt_die_usage("--valid-until must be later than --valid-from");
	if (keygen) {
		if (key_id == NULL || tenant == NULL || out_path == NULL || strcmp(out_path, "-") == 0)
			cnt_die_usage("--keygen needs --key-id ID, --tenant ID and -o KEYFILE");
		cnt_cli_max_operands(argc, argv, optind, 0, "operands");
		if (!cnt_sig_keyid_ok(key_id, strlen(key_id)))
			cnt_die_usage("--key-id: '%s' is not 1 to 64 characters of A-Z a-z 0-9 . _ -", key_id);
		if (*tenant == 0 || strlen(tenant) > 128)
			cnt_die_usage("--tenant: a tenant id is 1 to 128 bytes");
		if (access(out_path, F_OK) == 0)
			cnt_die("key file '%s' exists: a key is never overwritten", out_path);
		if (sodium_init() < 0)
			cnt_die("libsodium cannot be initialised");
		randombytes_buf(seed, sizeof(seed));
		snprintf(k.tenant_id, sizeof(k.tenant_id), "%s", tenant);
		snprintf(k.key_id, sizeof(k.key_id), "%s", key_id);
		if (cnt_sig_key_from_seed(&k, seed, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_out(&out, out_path);
		if (fchmod(out.fd, 0600) != 0)
			cnt_die("key file '%s': cannot make it private", out_path);
		cnt_sig_key_format(&k, text);
		if (cnt_write_all(out.fd, text, strlen(text)) != 0)
			cnt_err_write(&err, errno, "cannot write key file '%s'", out_path), cnt_die_err(&err);
		cnt_cli_commit(&out);
		print_entry(&k, origins, from, until);
		sodium_memzero(&k, sizeof(k));
		sodium_memzero(text, sizeof(text));
		return cnt_cli_finish();
	}
	if (key_id || tenant)
		cnt_die_usage("--key-id and --tenant go with --keygen");
	read_key(key_path, &k);
	if (public) {
		cnt_cli_max_operands(argc, argv, optind, 0, "operands");
		print_entry(&k, origins, from, until);
		return cnt_cli_finish();
	}
	return cnt_sign_main(&k, argv + optind, argc - optind, out_path, &co);
}
