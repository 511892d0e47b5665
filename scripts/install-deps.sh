#!/bin/sh
# Installs the Debian packages cnt needs to build, test and benchmark.
# Idempotent: when every package is present it does nothing (no apt-get at all).
# Run as root (or through sudo) on Debian 12 or later.
set -eu
# libsodium-dev: Ed25519 verification of signed events (cnt-keyring(5)) is
# a well-kept library's, never hand-written; python3-cryptography checks
# the documented test vectors against an independent implementation.

PKGS="make gcc clang libc6-dev
libzstd-dev zlib1g-dev libsnappy-dev liblzma-dev libbz2-dev
libcsv-dev libjansson-dev libxxhash-dev libsodium-dev pkg-config
bats tzdata python3 python3-avro python3-zstandard python3-snappy
python3-cryptography
jq time parallel openssh-server openssh-client rsync"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
