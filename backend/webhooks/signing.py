"""Standard Webhooks signing (https://www.standardwebhooks.com/): `whsec_` secrets; the signature of one request
is `v1,` + base64(HMAC-SHA256(key, f"{id}.{timestamp}.{body}")), key being the base64-decoded secret. Tests check
these signatures with the reference `standardwebhooks` library, not with this module."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets as _random
from collections.abc import Sequence

PREFIX = "whsec_"
SECRET_BYTES = 24


def new_secret() -> str:
    return PREFIX + base64.b64encode(_random.token_bytes(SECRET_BYTES)).decode("ascii")


def _key(secret: str) -> bytes:
    raw = secret[len(PREFIX) :] if secret.startswith(PREFIX) else secret
    return base64.b64decode(raw + "=" * (-len(raw) % 4))


def signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(_key(secret), f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode("ascii")


def headers(secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three Standard Webhooks headers; one signature per secret, space-separated (the current secret's
    first, then a rotated-out one still in its grace)."""
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(s, msg_id, timestamp, body) for s in secrets),
    }
