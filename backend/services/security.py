"""Passwords (scrypt), API key material (SHA-256 at rest), session tokens (JWT HS256) and the signing secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import jwt

from backend import clock
from backend.config import Settings
from backend.errors import ApiError

KEY_PREFIX = "spk_live_v1-"
SECRET_FILE = "session_secret.key"
_FORBIDDEN_SECRETS = {"", "secret", "changeme", "change-me", "changethis", "default", "socialpub"}
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


# ---- passwords -------------------------------------------------------------------------------------
def hash_password(password: str) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    salt_b64, digest_b64 = base64.b64encode(salt).decode(), base64.b64encode(digest).decode()
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${salt_b64}${digest_b64}"


def dummy_password_hash() -> str:
    """A stored hash to verify against when there is no account (so that timing does not tell which emails
    exist): the current scrypt parameters with a random salt and a random digest. Verifying a password against
    it costs what a real verification costs, and nothing matches it; making it runs no scrypt (~60-75 ms at
    start-up otherwise)."""
    salt_b64, digest_b64 = (
        base64.b64encode(os.urandom(16)).decode(),
        base64.b64encode(os.urandom(32)).decode(),
    )
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${salt_b64}${digest_b64}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt_b64, digest_b64 = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    digest = hashlib.scrypt(
        password.encode(), salt=base64.b64decode(salt_b64), dklen=32, n=int(n), r=int(r), p=int(p)
    )
    return hmac.compare_digest(digest, base64.b64decode(digest_b64))


# ---- API keys --------------------------------------------------------------------------------------
def new_api_key() -> tuple[str, str, str]:
    """Returns (full key, displayable prefix, sha256 hex). 256 random bits after the service prefix."""
    body = secrets.token_urlsafe(32)  # 32 bytes = 256 bits
    full = KEY_PREFIX + body
    return full, full[: len(KEY_PREFIX) + 6], hash_key(full)


def hash_key(full: str) -> str:
    return hashlib.sha256(full.encode()).hexdigest()


def looks_like_key(value: str) -> bool:
    return value.startswith(KEY_PREFIX) and 20 < len(value) < 200


# ---- session secret and tokens -----------------------------------------------------------------------
def secret_path(settings: Settings) -> Path:
    return settings.data_dir / SECRET_FILE


def ensure_secret(settings: Settings) -> str:
    """Create the signing secret in the data dir if there is none (at init). Mode 0600."""
    if settings.secret_key:
        return load_secret(settings)
    path = secret_path(settings)
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(48))
    return load_secret(settings)


def load_secret(settings: Settings) -> str:
    """The signing secret: SOCIALPUB_SECRET_KEY, else <data_dir>/session_secret.key. Default or weak ones are refused."""
    value = settings.secret_key
    if value is None:
        path = secret_path(settings)
        if not path.exists():
            raise RuntimeError(
                f"no session signing secret at {path}: run `socialpub init` first (or set SOCIALPUB_SECRET_KEY)"
            )
        value = path.read_text().strip()
    if value.lower() in _FORBIDDEN_SECRETS or len(value) < 32:
        raise RuntimeError(
            "the session signing secret is empty, a default value, or shorter than 32 characters: refused"
        )
    return value


def issue_session(
    secret: str, owner_id: str, workspace_id: str, ttl_s: int, operator: bool = False
) -> tuple[str, datetime]:
    issued = clock.now()
    expires = issued + timedelta(seconds=ttl_s)
    claims = {
        "sub": owner_id,
        "ws": workspace_id,
        "typ": "session",
        "iat": int(issued.timestamp()),
        "exp": int(expires.timestamp()),
        "jti": secrets.token_hex(8),
    }
    if operator:
        claims["op"] = True
    return jwt.encode(claims, secret, algorithm="HS256"), expires


def decode_session(secret: str, token: str) -> dict[str, Any]:
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=["HS256"],
            options={"require": ["exp", "sub", "ws"], "verify_iat": False},
            leeway=0,
        )
    except jwt.ExpiredSignatureError:
        raise ApiError(401, "session_expired", "the session token has expired: log in again") from None
    except jwt.PyJWTError:
        raise ApiError(401, "invalid_session", "the session token is invalid") from None
    if claims.get("typ") != "session":
        raise ApiError(401, "invalid_session", "the session token is invalid")
    # PyJWT checks exp against the system clock; check against ours too (tests move it).
    if claims["exp"] <= int(clock.now().timestamp()):
        raise ApiError(401, "session_expired", "the session token has expired: log in again")
    return claims
