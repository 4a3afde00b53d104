"""Sandbox core: configuration, accounts, behaviours, the emulator router, timing as a function of the clock.

Each network's emulator is a set of plain functions routed by method + path: a callable httpx.Request ->
httpx.Response, served to a plain httpx.Client through `httpx.MockTransport` (see `Sandbox.transport`).
Everything an emulator holds lives in the sandbox's own database (store.py), so it survives restarts and can
be listed. The emulators import nothing of the product: they get their settings as plain values
(`SandboxConfig`) from whoever constructs them, including which emulators there are ("module:Class" references:
each network's package holds its own, backend/networks/<name>/emulator.py).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import logging
import re
import secrets
import string
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl

import httpx
from peewee import ModelSelect

from backend.networks.sandbox.developer_app import NEW_APP, EmulatedApp
from backend.networks.sandbox.faults import Fault
from backend.networks.sandbox.store import (
    DatabaseLocation,
    SandboxAccount,
    SandboxItem,
    SandboxSetting,
    is_sqlite,
    open_database,
    sandbox_db,
)

log = logging.getLogger("socialpub.sandbox")

BEHAVIOURS: tuple[str, ...] = ("ok", "fail-permanent", "fail-retriable", "rate-limited", "slow", "flaky")
SLOW_FACTOR = 10.0


def now() -> datetime:
    """Aware UTC now (tests move it with time-machine)."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class SandboxConfig:
    """Everything the emulators need to know, as plain values.

    emulators: the emulated networks, (name, "module:Class") each. delay_s: the latency of every emulated call
    (the transport sleeps this long before the emulator answers); network_delay_s: per-network overrides of it,
    e.g. (("youtube", 5.0),). processing_s: the asynchronous processing time of the networks that process a
    publication after accepting it. limits: enforce the real networks' rate limits and daily caps. options: each
    network's own values, ("<network>.<key>", value) each (a daily cap: see each emulator's `option` calls).
    verified_url_prefixes: URL prefixes a network accepts on plain http as the app's verified domain (our own
    media host). apps: the emulated developer app of each network ((name, EmulatedApp) each; a network not
    named is a new app: see sandbox/developer_app.py)."""

    location: DatabaseLocation
    emulators: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.2
    network_delay_s: tuple[tuple[str, float], ...] = ()
    processing_s: float = 3.0
    limits: bool = True
    options: tuple[tuple[str, Any], ...] = ()
    verified_url_prefixes: tuple[str, ...] = ()
    apps: tuple[tuple[str, EmulatedApp], ...] = ()

    def app(self, platform: str) -> EmulatedApp:
        """The emulated developer app calling this network (NEW_APP unless configured)."""
        for name, value in self.apps:
            if name == platform:
                return value
        return NEW_APP

    def delay_for(self, platform: str) -> float:
        for name, value in self.network_delay_s:
            if name == platform:
                return max(0.0, value)
        return max(0.0, self.delay_s)

    def option(self, platform: str, key: str, default: Any) -> Any:
        wanted = f"{platform}.{key}"
        for name, value in self.options:
            if name == wanted:
                return value
        return default


# The emulators this process knows, by network name ("module:Class"): every SandboxConfig's, as a Sandbox is made
# of it (the module-level helpers below act on "the sandbox database opened last", whose emulators these are).
_KNOWN: dict[str, str] = {}
_TYPES: dict[str, type[Emulator]] = {}


def know_emulators(emulators: tuple[tuple[str, str], ...]) -> None:
    for name, ref in emulators:
        if _KNOWN.get(name) != ref:
            _KNOWN[name] = ref
            _TYPES.pop(name, None)


def known_platforms() -> list[str]:
    return list(_KNOWN)


def emulator_type(platform: str) -> type[Emulator]:
    """The emulator class of a network this process knows (ValueError for another name)."""
    found = _TYPES.get(platform)
    if found is None:
        ref = _KNOWN.get(platform)
        if ref is None:
            known = ", ".join(_KNOWN) or "none: construct a Sandbox first"
            raise ValueError(f"unknown network {platform!r}: one of {known}")
        module, _sep, attr = ref.partition(":")
        found = _TYPES[platform] = getattr(importlib.import_module(module), attr)
    return found


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


def new_account_id() -> str:
    return "sbx_" + secrets.token_hex(10)


def register_account(
    platform: str, name: str, behaviour: str = "ok", *, private: bool = False
) -> SandboxIdentity:
    """Create an account at a sandbox network (in the current sandbox database: `open_database` / `Sandbox`);
    returns the identity an OAuth flow would have given."""
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"unknown sandbox behaviour {behaviour!r}: one of {', '.join(BEHAVIOURS)}")
    emulator = emulator_type(platform)
    external_id, token = emulator.new_identity(name)
    username = _slug(name) + "_" + secrets.token_hex(2)
    privacy = emulator.privacy_options(private)
    acc_id = new_account_id()
    with write():
        SandboxAccount.create(
            id=acc_id,
            platform=platform,
            external_id=external_id,
            token_hash=token_hash(token),
            name=name,
            username=username,
            display_name=name,
            behaviour=behaviour,
            is_private=private,
            privacy_level_options=list(privacy),
            calls=0,
            created_at=now(),
        )
    return SandboxIdentity(external_id, token, username, name, privacy, acc_id)


def set_behaviour(sandbox_account_id: str, behaviour: str) -> None:
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"unknown sandbox behaviour {behaviour!r}")
    with write():
        SandboxAccount.update(behaviour=behaviour).where(SandboxAccount.id == sandbox_account_id).execute()
    _ACCOUNTS.clear()


_ACCOUNTS: dict[tuple[int, str], SandboxAccount] = {}
_WRITE_LOCKS: dict[int, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _write_lock() -> threading.RLock:
    key = id(sandbox_db.obj)
    lock = _WRITE_LOCKS.get(key)
    if lock is None:
        with _LOCKS_GUARD:
            lock = _WRITE_LOCKS.setdefault(key, threading.RLock())
    return lock


@contextmanager
def write() -> Iterator[None]:
    """One write transaction of the sandbox database. Threads of this process queue on a lock (SQLite admits
    one writer; queueing beats its busy handler's sleeps); other processes meet SQLite's IMMEDIATE lock or,
    on PostgreSQL, the account row lock of `exclusive`. Inside another write() of this thread it is part of that
    transaction (no savepoint: no emulator catches an error inside a write and carries on)."""
    if sandbox_db.in_transaction():
        yield
        return
    with _write_lock(), sandbox_db.atomic():
        yield


@contextmanager
def exclusive(acc: SandboxAccount) -> Iterator[None]:
    """A write transaction in which no other call of this account runs: a cap check and the insert that counts
    against it are atomic (threads: the lock; processes: SQLite's write lock or PostgreSQL's row lock)."""
    with write():
        if not is_sqlite():
            SandboxAccount.select(SandboxAccount.id).where(SandboxAccount.id == acc.id).for_update().execute()
        yield


def known_account(token: str | None) -> SandboxAccount | None:
    """The account of an access token this process has looked up already (account_for_token's cache): no query."""
    return _ACCOUNTS.get((id(sandbox_db.obj), token)) if token else None


def account_for_token(token: str | None) -> SandboxAccount | None:
    """The account of an access token (looked up by its SHA-256, the only form the sandbox keeps), cached in
    process per database and token (set_behaviour clears the cache)."""
    if not token:
        return None
    key = (id(sandbox_db.obj), token)
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
    flaky fails every other one (the 1st, 3rd, ...), deterministically, counted in the database;
    fail-permanent is played by each emulator where the real network would refuse (often asynchronously)."""
    b = acc.behaviour
    if b == "fail-retriable":
        return Gate.RETRIABLE
    if b == "rate-limited":
        return Gate.RATE
    if b == "flaky":
        with write():
            SandboxAccount.update(calls=SandboxAccount.calls + 1).where(SandboxAccount.id == acc.id).execute()
            calls = SandboxAccount.select(SandboxAccount.calls).where(SandboxAccount.id == acc.id).scalar()
        return Gate.RETRIABLE if calls % 2 == 1 else None
    return None


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


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers)


def empty_response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers)


# --- the error switches' storage (sandbox/errors.py arms them, Emulator.armed_fault consumes them) ---------------
DEFAULT_ENDPOINT = "publish"  # a switch without a path matches the network's publishing call


def switch_key(platform: str) -> str:
    return f"errors:{platform}"


def _anything_armed(key: str) -> bool:
    """Whether the switches of `key` hold anything armed: asked on every emulator call, so only the value column
    is read, as a tuple (no model built)."""
    row = SandboxSetting.select(SandboxSetting.value).where(SandboxSetting.key == key).tuples().first()
    if row is None or row[0] is None:
        return False
    value = json.loads(row[0]) if isinstance(row[0], str | bytes) else row[0]
    return isinstance(value, dict) and bool(value.get("armed"))


class Emulator:
    """Routes requests to handler functions; subclasses register routes in __init__.

    What a network's emulator class says of itself: HOSTS, its `.invalid` hosts by role (`api` always; `video`,
    `upload`… where the network has more), which the adapters are given; SERVED_HOSTS, other hosts of its
    answers that `socialpub sandbox serve` rewrites to its own origin (HOSTS' origins always are); OAUTH, its
    OAuth side (sandbox/oauth.py's OAuthProvider); FAULTS and ERROR_ENDPOINTS, its error switches
    (sandbox/errors.py); SERVE_BASE_PATH, the path of SOCIALPUB_<NETWORK>_BASE_URL under a served emulator's
    origin, SERVE_ENDPOINTS, the (name, "[METHOD ]path") of its OAuth endpoints there, and SERVE_SETTINGS, the other
    settings that point at that origin."""

    platform = ""
    HOSTS: dict[str, str] = {}
    SERVED_HOSTS: tuple[str, ...] = ()
    OAUTH: Any = None
    FAULTS: dict[str, Fault] = {}
    ERROR_ENDPOINTS: dict[str, tuple[tuple[str, ...], str]] = {}
    SERVE_BASE_PATH = ""
    SERVE_ENDPOINTS: tuple[tuple[str, str], ...] = ()
    # other settings `socialpub sandbox serve` prints pointing at its origin (a second host served there too)
    SERVE_SETTINGS: tuple[str, ...] = ()
    # a network reached otherwise than by a setting (a Mastodon instance is named at connect): what to run instead,
    # with {origin} and {host} (the served origin and its host:port); "" for the usual BASE_URL setting
    SERVE_HINT = ""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self._by_method: dict[str, list[tuple[re.Pattern[str], Handler]]] = {}

    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        """(external account id, access token) of a new account, shaped like the real network's."""
        return digits(15), "tok." + b62(60)

    @classmethod
    def privacy_options(cls, private: bool) -> tuple[str, ...]:
        """The privacy levels a new account offers (a network that has them), private or public."""
        return ()

    @classmethod
    def served_hosts(cls) -> tuple[str, ...]:
        """The hosts `socialpub sandbox serve` rewrites to its origin: HOSTS' origins and SERVED_HOSTS."""
        origins = [re.sub(r"^(https?://[^/]+).*$", r"\1", url) for url in cls.HOSTS.values()]
        return tuple(dict.fromkeys([*origins, *cls.SERVED_HOSTS]))

    def option(self, key: str, default: Any) -> Any:
        """This network's own value `key` of the configuration (SandboxConfig.options), else `default`."""
        return self.config.option(self.platform, key, default)

    def route(self, method: str, pattern: str, fn: Handler) -> None:
        self._by_method.setdefault(method, []).append((re.compile(pattern + r"/?$"), fn))

    def now(self) -> datetime:
        return now()

    def processing_s(self, acc: SandboxAccount, factor: float = 1.0) -> float:
        return self.processing_for(acc.behaviour, factor)

    def processing_for(self, behaviour: str, factor: float = 1.0) -> float:
        d = max(0.0, self.config.processing_s) * factor
        return d * SLOW_FACTOR if behaviour == "slow" else d

    def listing_delay_s(self, behaviour: str = "ok") -> float:
        """How long after accepting a publication this network's listing may still miss it (0: listed at once,
        the default)."""
        return 0.0

    def elapsed(self, item: SandboxItem) -> float:
        started: datetime = item.started_at
        return (self.now() - started).total_seconds()

    def ready(self, item: SandboxItem) -> bool:
        return self.elapsed(item) >= item.processing_s

    def count_since(
        self,
        acc: SandboxAccount,
        kinds: tuple[str, ...],
        seconds: float,
        *,
        mode_suffix: str | None = None,
        limit: int | None = None,
    ) -> int:
        """The account's items of `kinds` created in the last `seconds` (whose mode ends with `mode_suffix`
        when given): a range of the (platform, account_id, kind, created_at) index. limit: stop counting there
        (a cap check needs no more), so the cost does not grow with the table."""
        since = self.now() - timedelta(seconds=seconds)
        q = SandboxItem.select(SandboxItem.id).where(
            (SandboxItem.platform == self.platform)
            & (SandboxItem.account_id == acc.id)
            & SandboxItem.kind.in_(kinds)
            & (SandboxItem.created_at > since)
        )
        if mode_suffix is not None:
            q = q.where(SandboxItem.mode.endswith(mode_suffix))
        if limit is not None:
            q = q.limit(limit)
        return q.count()

    def not_found(self, request: Request) -> httpx.Response:
        return json_response(
            404, {"error": "not_found", "message": f"no route {request.method} {request.url.path}"}
        )

    def path_of(self, request: Request) -> str:
        return request.url.path

    # --- error switches (sandbox/errors.py arms them; a call consumes the first that matches) -------------------
    def _matches(self, spec: str, method: str, path: str) -> bool:
        named = self.ERROR_ENDPOINTS.get(spec)
        if named is not None:
            methods, pattern = named
            return method in methods and re.search(pattern, path) is not None
        try:
            return re.search(spec, path) is not None
        except re.error:
            return False

    def armed_fault(self, method: str, path: str) -> httpx.Response | None:
        """The armed error this call consumes (its response), or None: the emulator serves the call. One read of
        the switches when nothing is armed."""
        if path.startswith("/_sandbox/"):
            return None
        key = switch_key(self.platform)
        if not _anything_armed(key):
            return None
        with write():  # consume under the write lock: two calls never take the same last use
            row = SandboxSetting.get_or_none(SandboxSetting.key == key)
            armed = list((row.value or {}).get("armed") or []) if row else []
            for i, entry in enumerate(armed):
                if self._matches(str(entry.get("path") or DEFAULT_ENDPOINT), method, path):
                    left = int(entry.get("times") or 1) - 1
                    if left > 0:
                        armed[i] = {**entry, "times": left}
                    else:
                        del armed[i]
                    SandboxSetting.update(value={"armed": armed}).where(SandboxSetting.key == key).execute()
                    fault = self.FAULTS.get(str(entry.get("code")))
                    return fault.response() if fault is not None else None
        return None

    def __call__(self, raw: httpx.Request) -> httpx.Response:
        fault = self.armed_fault(raw.method, raw.url.path)  # an armed error switch answers instead
        if fault is not None:
            return fault
        request = Request(raw)
        path = self.path_of(request)
        for pattern, fn in self._by_method.get(request.method, ()):  # the routes of the method, in order
            m = pattern.match(path)
            if m:
                return fn(request, **m.groupdict())
        return self.not_found(request)


def new_item(
    platform: str, acc: SandboxAccount, kind: str, item_id: str, *, processing_s: float = 0.0, **fields: Any
) -> SandboxItem:
    t = now()
    with write():
        return SandboxItem.create(
            id=item_id,
            platform=platform,
            account_id=acc.id,
            kind=kind,
            started_at=t,
            processing_s=processing_s,
            created_at=t,
            **fields,
        )


def update_item(item_id: str, **fields: Any) -> None:
    with write():
        SandboxItem.update(**fields).where(SandboxItem.id == item_id).execute()


def get_item(item_id: str, platform: str | None = None) -> SandboxItem | None:
    """A sandbox item by id (of `platform` when given): the hot read of every status call."""
    item = SandboxItem.get_or_none(SandboxItem.id == item_id)
    if item is None or (platform is not None and item.platform != platform):
        return None
    return item


def find_by_post_id(platform: str, post_id: str) -> SandboxItem | None:
    """The item of `platform` whose network-side id (post_id) is `post_id` (partial index on post_id)."""
    return SandboxItem.get_or_none((SandboxItem.post_id == post_id) & (SandboxItem.platform == platform))


# --- listings: newest first, in pages ------------------------------------------------------------------
def encode_cursor(item: SandboxItem) -> str:
    raw = f"{item.created_at.isoformat()}|{item.id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str] | None:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        when, _sep, item_id = raw.partition("|")
        return datetime.fromisoformat(when), item_id
    except (ValueError, UnicodeDecodeError):
        return None


def page_after(
    query: ModelSelect[SandboxItem], cursor: str | None, limit: int
) -> tuple[list[SandboxItem], str | None]:
    """One page of `query` newest first (created_at, then id, descending) after the opaque `cursor` (the last
    item of the previous page); returns the items and the cursor of the next page (None: no more)."""
    if cursor:
        key = decode_cursor(cursor)
        if key is not None:
            when, item_id = key
            query = query.where(
                (SandboxItem.created_at < when)
                | ((SandboxItem.created_at == when) & (SandboxItem.id < item_id))
            )
    rows: list[SandboxItem] = list(
        query.order_by(SandboxItem.created_at.desc(), SandboxItem.id.desc()).limit(limit + 1)
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (encode_cursor(rows[-1]) if more and rows else None)


def page_at(query: ModelSelect[SandboxItem], start: int, count: int) -> tuple[list[SandboxItem], bool]:
    """Offset paging (LinkedIn start/count, TikTok's integer cursor), newest first; (items, has_more)."""
    rows: list[SandboxItem] = list(
        query.order_by(SandboxItem.created_at.desc(), SandboxItem.id.desc())
        .offset(max(0, start))
        .limit(count + 1)
    )
    return rows[:count], len(rows) > count


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (TikTok counts its limits this way)."""
    return len(text.encode("utf-16-le")) // 2


__all__ = [
    "BEHAVIOURS",
    "DatabaseLocation",
    "Emulator",
    "SandboxAccount",
    "SandboxConfig",
    "SandboxIdentity",
    "SandboxItem",
    "emulator_type",
    "know_emulators",
    "open_database",
    "register_account",
    "set_behaviour",
]
