"""The authorization step's wire helpers (split from oauth.py, issue 31): RFC 7636's PKCE check and the
redirect back to the client's redirect_uri.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx


def pkce_ok(challenge: str, method: str, verifier: str | None, *, encoding: str = "base64url") -> bool:
    """RFC 7636: S256 (BASE64URL(SHA256(verifier)) without padding) or plain. encoding="hex": the network takes
    S256 only, written as the SHA-256 in hex (TikTok's Login Kit), and nothing else."""
    if not verifier:
        return False
    if encoding == "hex":
        digest = hashlib.sha256(verifier.encode("ascii", "replace")).hexdigest()
        return (method or "").upper() == "S256" and hmac.compare_digest(challenge.lower(), digest)
    if (method or "plain").upper() == "PLAIN":
        return hmac.compare_digest(challenge, verifier)
    digest_b = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return hmac.compare_digest(challenge, base64.urlsafe_b64encode(digest_b).decode().rstrip("="))


def redirect(uri: str, params: dict[str, Any], fragment: str = "") -> httpx.Response:
    sep = "&" if urlsplit(uri).query else "?"
    return httpx.Response(
        302,
        headers={
            "Location": uri + sep + urlencode({k: v for k, v in params.items() if v is not None}) + fragment
        },
    )
