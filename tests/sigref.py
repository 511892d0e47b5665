#!/usr/bin/python3
"""An independent implementation of cnt-keyring(5)'s canonical form and
signature field, with python3-cryptography's Ed25519 (OpenSSL), for
tests/sign.bats: the C code (libsodium) and this must agree byte for byte.

  sigref.py canon EVENT_JSON          canonical bytes in hex
  sigref.py sign SEED_B64 KEY_ID EVENT_JSON   the signature field
  sigref.py public SEED_B64           the public key in base64
  sigref.py verify PUB_B64 EVENT_JSON_WITH_SIGNATURE   exit 0 when valid
"""
import base64, datetime, json, struct, sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey, Ed25519PublicKey)
from cryptography.hazmat.primitives import serialization
from cryptography.exceptions import InvalidSignature


def ms(t):
    if isinstance(t, int):
        return t
    d = datetime.datetime.fromisoformat(t.replace("Z", "+00:00"))
    return int(round(d.timestamp() * 1000))


def canon(e):
    out = b"cnt-sig/1\0"
    for f in ("tenant_id", "counter_id", "member_ref", "subject", "delta", "item",
              "event_time", "idempotency_key"):
        v = e.get(f)
        if v is None:
            out += b"\0"
        elif f in ("delta", "event_time"):
            out += b"\1" + struct.pack(">q", ms(v) if f == "event_time" else v)
        else:
            b = v.encode("utf-8")
            out += b"\1" + struct.pack(">I", len(b)) + b
    return out


def key(seed):
    return Ed25519PrivateKey.from_private_bytes(base64.b64decode(seed, validate=True))


def main(a):
    if a[0] == "canon":
        print(canon(json.loads(a[1])).hex())
    elif a[0] == "public":
        pub = key(a[1]).public_key().public_bytes(serialization.Encoding.Raw,
                                                  serialization.PublicFormat.Raw)
        print(base64.b64encode(pub).decode())
    elif a[0] == "sign":
        sig = key(a[1]).sign(canon(json.loads(a[3])))
        print("ed25519:%s:%s" % (a[2], base64.b64encode(sig).decode()))
    elif a[0] == "verify":
        e = json.loads(a[2])
        _, _, b64 = e["signature"].split(":", 2)
        pub = Ed25519PublicKey.from_public_bytes(base64.b64decode(a[1], validate=True))
        try:
            pub.verify(base64.b64decode(b64, validate=True), canon(e))
        except InvalidSignature:
            sys.exit(1)
    else:
        sys.exit("sigref.py: unknown command")


main(sys.argv[1:])
