"""Sandbox core: accounts, behaviours, the in-process emulator router, timing as a function of the clock.

Each network's emulator is a set of plain functions routed by method + path, served to a SYNC
httpx.Client through httpx.MockTransport (fast: no event loop, no sockets). Everything an emulator holds
lives in the store (SandboxAccount, SandboxItem), so it survives restarts and can be listed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl

import httpx

from backend import clock
from backend.config import Settings
from backend.ids import new_id
from backend.networks.sandbox.wire import json_response
from backend.store import fast, fastq
from backend.store.db import database, is_sqlite, tx
from backend.store.models.sandbox import SandboxAccount, SandboxItem

log = logging.getLogger("socialpub.sandbox")

BEHAVIOURS: tuple[str, ...] = ("ok", "fail-permanent", "fail-retriable", "rate-limited", "slow", "flaky")
SLOW_FACTOR = 10.0

# the hosts the sandbox adapters talk to: `.invalid` never resolves, so nothing can leak to a real network
SANDBOX_BASES: dict[str, dict[str, str]] = {
    "tiktok": {"api": "https://open.tiktokapis.sandbox.invalid"},
    "facebook": {"api": "https://graph.facebook.sandbox.invalid/v21.0",
                 "video": "https://graph-video.facebook.sandbox.invalid/v21.0"},
    "instagram": {"api": "https://graph.facebook.sandbox.invalid/v21.0"},
    "linkedin": {"api": "https://api.linkedin.sandbox.invalid/rest"},
    "youtube": {"api": "https://www.googleapis.sandbox.invalid/youtube/v3",
                "upload": "https://www.googleapis.sandbox.invalid/upload/youtube/v3"},
}


@dataclass(frozen=True)
class SandboxIdentity:
    """What connecting a sandbox account gives the accounts service."""

    external_account_id: str
    access_token: str = field(repr=False)
    username: str
    display_name: str
    privacy_level_options: tuple[str, ...] = ()
    sandbox_account_id: str = ""
    token_expires_at: datetime | None = None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def digits(n: int, first: str = "") -> str:
    """n random digits (after `first`; without it, the first is 1-9). One draw of the system RNG per id, not
    one per character (ids are minted on every sandbox call)."""
    m = n - len(first)
    body = str(secrets.randbelow(10**m)).zfill(m) if m > 0 else ""
    return first + body if first else str(secrets.randbelow(9) + 1) + body[1:]


def b62(n: int) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(n))


_B64URL = string.ascii_letters + string.digits + "-_"


def b64url(n: int) -> str:
    """n random URL-safe characters: 6 uniform bits from each byte of one system-RNG read."""
    return "".join([_B64URL[b & 63] for b in secrets.token_bytes(n)])


def _slug(name: str) -> str:
    s = re.sub(r"[^a-z0-9_.]+", "_", name.lower()).strip("_.")
    return (s or "creator")[:24]


def _identity_for(platform: str, name: str) -> tuple[str, str]:
    """(external account id, access token) shaped like the real network's."""
    if platform == "tiktok":
        return "-000" + b64url(28), "act." + b62(60)
    if platform == "facebook":
        return digits(15, "1"), "EAAG" + b62(120)
    if platform == "instagram":
        return "178414" + digits(11, "0"), "IGQV" + b62(120)
    if platform == "linkedin":
        return "urn:li:person:" + b64url(10), "AQV" + b62(150)
    if platform == "youtube":
        return "UC" + b64url(22), "ya29." + b64url(150)
    raise ValueError(f"unknown network {platform!r}")


def register_account(platform: str, name: str, behaviour: str = "ok", *, private: bool = False) -> SandboxIdentity:
    """Create an account at a sandbox network; returns the identity an OAuth flow would have given."""
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"unknown sandbox behaviour {behaviour!r}: one of {', '.join(BEHAVIOURS)}")
    if platform not in SANDBOX_BASES:
        raise ValueError(f"unknown network {platform!r}")
    external_id, token = _identity_for(platform, name)
    username = _slug(name) + "_" + secrets.token_hex(2)
    privacy: tuple[str, ...] = ()
    if platform == "tiktok":
        privacy = (("FOLLOWER_OF_CREATOR", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY") if private
                   else ("PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"))
    acc_id = new_id("sbx")
    with tx():
        SandboxAccount.create(id=acc_id, platform=platform, external_id=external_id, token_hash=token_hash(token),
                              name=name, username=username, display_name=name, behaviour=behaviour,
                              is_private=private, privacy_level_options=list(privacy), calls=0,
                              created_at=clock.now())
    return SandboxIdentity(external_id, token, username, name, privacy, acc_id)


def set_behaviour(sandbox_account_id: str, behaviour: str) -> None:
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"unknown sandbox behaviour {behaviour!r}")
    with tx():
        SandboxAccount.update(behaviour=behaviour).where(SandboxAccount.id == sandbox_account_id).execute()
    _ACCOUNTS.clear()


_ACCOUNTS: dict[tuple[int, str], SandboxAccount] = {}


def account_for_token(token: str | None) -> SandboxAccount | None:
    """The account of an access token (looked up by its SHA-256, the only form the store keeps), cached in
    process per database and token (set_behaviour clears the cache)."""
    if not token:
        return None
    key = (id(database.obj), token)
    acc = _ACCOUNTS.get(key)
    if acc is None:
        acc = SandboxAccount.get_or_none(SandboxAccount.token_hash == token_hash(token))
        if acc is None:
            return None
        if len(_ACCOUNTS) > 10_000:
            _ACCOUNTS.clear()
        _ACCOUNTS[key] = acc
    return acc


class Gate:
    """What an account's behaviour does to a publishing call."""

    OK = None
    PERMANENT = "permanent"
    RETRIABLE = "retriable"
    RATE = "rate"


def gate(acc: SandboxAccount) -> str | None:
    """Applied to each network's publishing call. fail-retriable / rate-limited fail it every time;
    flaky fails every other one (the 1st, 3rd, ...), deterministically, counted in the store;
    fail-permanent is played by each emulator where the real network would refuse (often asynchronously)."""
    b = acc.behaviour
    if b == "fail-retriable":
        return Gate.RETRIABLE
    if b == "rate-limited":
        return Gate.RATE
    if b == "flaky":
        with tx():
            fast.update(SandboxAccount, acc.id, {}, increment=("calls",))
            calls = database.execute_sql(_CALLS_SQL.replace("?", database.obj.param), (acc.id,)).fetchone()[0]
        return Gate.RETRIABLE if calls % 2 == 1 else None
    return None


_CALLS_SQL = 'SELECT "calls" FROM "sandbox_account" WHERE "id" = ?'


class Request:
    """A parsed request: query + form/JSON body merged in `params` (Graph API style), the JSON body in `json`."""

    def __init__(self, raw: httpx.Request) -> None:
        self.raw = raw
        self.method = raw.method
        self.url = raw.url
        self.headers = raw.headers
        self._header_values = _header_dict(raw.headers)
        self.query = _query_dict(raw.url.query)
        self.content = raw.read()
        self.json: Any = None
        self.form: dict[str, str] = {}
        ctype = self.header("content-type")
        if self.content and "json" in ctype:
            try:
                self.json = json.loads(self.content)
            except ValueError:
                self.json = ValueError("malformed JSON")
        elif self.content and "x-www-form-urlencoded" in ctype:
            self.form = dict(_qsl(self.content.decode("utf-8", "replace")))
        self.params: dict[str, Any] = {**self.query, **self.form}
        if isinstance(self.json, dict):
            self.params.update(self.json)

    def header(self, name: str, default: str = "") -> str:
        """headers.get(name, default), from a dict made once per request."""
        return self._header_values.get(name.lower(), default)

    def bearer(self) -> str | None:
        auth = self.header("authorization")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return None

    def token(self) -> str | None:
        return self.bearer() or self.params.get("access_token")


def _header_dict(headers: httpx.Headers) -> dict[str, str]:
    """What headers.get(name) gives, for every name at once: values decoded with the headers' encoding (ASCII
    when everything is; else httpx's own choice), repeated names joined with ", "."""
    raw = headers.raw
    try:
        pairs = [(k.lower().decode("ascii"), v.decode("ascii")) for k, v in raw]
    except UnicodeDecodeError:
        enc = headers.encoding
        pairs = [(k.lower().decode(enc), v.decode(enc)) for k, v in raw]
    out: dict[str, str] = {}
    for k, v in pairs:
        out[k] = out[k] + ", " + v if k in out else v
    return out


def _query_dict(query: bytes) -> dict[str, str]:
    """dict(url.params) without building QueryParams: the first value of each name (parse_qs order)."""
    out: dict[str, str] = {}
    if query:
        for k, v in _qsl(query.decode("ascii")):
            if k not in out:
                out[k] = v
    return out


def _qsl(text: str) -> list[tuple[str, str]]:
    """parse_qsl(text, keep_blank_values=True). Without '%' or '+' there is nothing to decode: the pairs are
    the '&'-separated non-empty fields split at their first '=' (a field without one has the value '')."""
    if "%" in text or "+" in text:
        return parse_qsl(text, keep_blank_values=True)
    out = []
    for pair in text.split("&"):
        if pair:
            name, _eq, value = pair.partition("=")
            out.append((name, value))
    return out


Handler = Callable[..., httpx.Response]


class Emulator:
    """Routes requests to handler functions; subclasses register routes in __init__."""

    platform = ""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self._by_method: dict[str, list[tuple[re.Pattern[str], Handler]]] = {}

    def route(self, method: str, pattern: str, fn: Handler) -> None:
        compiled = re.compile(pattern + r"/?$")
        self._routes.append((method, compiled, fn))
        self._by_method.setdefault(method, []).append((compiled, fn))

    def now(self) -> datetime:
        return clock.now()

    def processing_s(self, acc: SandboxAccount, factor: float = 1.0) -> float:
        d = max(0.0, self.settings.sandbox_delay_s) * factor
        return d * SLOW_FACTOR if acc.behaviour == "slow" else d

    def elapsed(self, item: SandboxItem) -> float:
        return (self.now() - item.started_at).total_seconds()

    def ready(self, item: SandboxItem) -> bool:
        return self.elapsed(item) >= item.processing_s

    def count_since(self, acc: SandboxAccount, kinds: tuple[str, ...], seconds: float, *,
                    mode_suffix: str | None = None, limit: int | None = None) -> int:
        """The account's items of `kinds` created in the last `seconds` (whose mode ends with `mode_suffix`,
        case-insensitively, when given): a range of the (platform, account_id, kind, created_at) index.
        limit: stop counting there (a cap check needs no more), so the cost does not grow with the table."""
        since = self.now() - timedelta(seconds=seconds)
        where = (f'"platform" = ? AND "account_id" = ? AND "kind" IN ({", ".join("?" * len(kinds))}) '
                 'AND "created_at" > ?')
        params: list[Any] = [self.platform, acc.id, *kinds, SandboxItem.created_at.db_value(since)]
        if mode_suffix is not None:
            where += f' AND "mode" {"LIKE" if is_sqlite() else "ILIKE"} ? ESCAPE ?'
            params += ["%" + mode_suffix.replace("\\", "\\\\").replace("_", "\\_").replace("%", "\\%"), "\\"]
        return fastq.count(SandboxItem, where, params, limit=limit)

    def not_found(self, request: Request) -> httpx.Response:
        return json_response(404, {"error": "not_found", "message": f"no route {request.method} {request.url.path}"})

    def path_of(self, request: Request) -> str:
        return request.url.path

    def __call__(self, raw: httpx.Request) -> httpx.Response:
        request = Request(raw)
        path = self.path_of(request)
        for pattern, fn in self._by_method.get(request.method, ()):  # the routes of the method, in order
            m = pattern.match(path)
            if m:
                return fn(request, **m.groupdict())
        return self.not_found(request)


def new_item(platform: str, acc: SandboxAccount, kind: str, item_id: str, *, processing_s: float = 0.0,
             **fields: Any) -> SandboxItem:
    now = clock.now()  # one INSERT: atomic on its own (autocommit), or part of the caller's transaction
    return fastq.insert(SandboxItem, {"id": item_id, "platform": platform, "account_id": acc.id, "kind": kind,
                                      "started_at": now, "processing_s": processing_s, "created_at": now, **fields})


def get_item(item_id: str, platform: str | None = None) -> SandboxItem | None:
    """A sandbox item by id (of `platform` when given): the hot read of every status call."""
    item = fastq.get(SandboxItem, item_id)
    if item is None or (platform is not None and item.platform != platform):
        return None
    return item


def find_by_post_id(platform: str, post_id: str) -> SandboxItem | None:
    """The item of `platform` whose network-side id (post_id) is `post_id` (partial index on post_id)."""
    return fastq.first(SandboxItem, '"post_id" = ? AND "platform" = ?', (post_id, platform))


def seconds_to_midnight(tz_offset_h: int = 0) -> float:
    """Seconds until the next midnight in a fixed-offset zone (LinkedIn resets at UTC, YouTube at Pacific)."""
    now = clock.now() + timedelta(hours=tz_offset_h)
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1.0, (tomorrow - now).total_seconds())
