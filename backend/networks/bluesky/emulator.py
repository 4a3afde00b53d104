"""Bluesky emulator: a PDS and a PLC directory, as strict as the reference PDS (`@atproto/pds` 0.5.35, probed on
2026-11-28: /work/research/bluesky_mastodon.md part A; the rows of docs.md's fidelity table). The same suite runs
against it and against the real PDS (tests/networks/bluesky/test_pds_suite.py).

What it holds (the sandbox database): accounts (their handle is their username), their passwords and app
passwords (kind `password` / `app_password`, SHA-256 only), sessions (`session`: the JWTs' SHA-256), blobs
(`blob`) and records (`post`, id = the record's at:// URI). Errors are XRPC's `{"error", "message"}` with the
PDS's statuses and words; a 500 says only "Internal Server Error"."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
from datetime import datetime, timedelta
from typing import Any

import httpx
import regex

from backend.networks.sandbox.core import (
    Emulator,
    Gate,
    Request,
    account_for_token,
    exclusive,
    gate,
    get_item,
    json_response,
    new_account_id,
    new_item,
    token_hash,
    write,
)
from backend.networks.sandbox.store import SandboxAccount, SandboxItem

PLATFORM = "bluesky"
COLLECTION = "app.bsky.feed.post"
REFRESH_GRACE = timedelta(
    hours=2
)  # account-manager.ts REFRESH_GRACE_MS: a reused refresh token, same next pair
ACCESS_LIFE = timedelta(hours=2)  # @atproto/pds auth.ts: '120mins'
REFRESH_LIFE = timedelta(days=90)  # '90days'
DEFAULT_BLOB_LIMIT = 5 * 1024 * 1024  # @atproto/pds config: blobUploadLimit 5 MiB
IMAGE_MAX = 2_000_000  # app.bsky.embed.images image maxSize
THUMB_MAX = 1_000_000  # app.bsky.embed.external thumb maxSize
VIDEO_MAX = 300_000_000  # app.bsky.embed.video video maxSize
TID = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")
RKEY = re.compile(r"^[a-zA-Z0-9_~.:-]{1,512}$")
DID = re.compile(r"^did:[a-z]+:[a-zA-Z0-9._:%-]*[a-zA-Z0-9._-]$")
DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
LANG = re.compile(r"^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$")
SECRET = b"socialpub-sandbox-bluesky"  # the emulated PDS's JWT secret (its tokens are nobody's)


def xrpc_error(
    status: int, error: str, message: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    return json_response(status, {"error": error, "message": message}, headers)


def internal_error() -> httpx.Response:
    return xrpc_error(500, "InternalServerError", "Internal Server Error")


def invalid(message: str) -> httpx.Response:
    return xrpc_error(400, "InvalidRequest", message)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode().lower().rstrip("=")


def blob_cid(data: bytes) -> str:
    """CIDv1, raw codec, sha2-256, base32 (how the PDS names a blob)."""
    return "b" + _b32(bytes([0x01, 0x55, 0x12, 0x20]) + hashlib.sha256(data).digest())


def record_cid(record: Any) -> str:
    raw = json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
    return "b" + _b32(bytes([0x01, 0x71, 0x12, 0x20]) + hashlib.sha256(raw).digest())


def graphemes(text: str) -> int:
    return len(regex.findall(r"\X", text))


def mint(did: str, scope: str, life: timedelta, now: datetime, jti: str | None = None) -> str:
    header = _b64(
        json.dumps({"typ": "at+jwt" if "refresh" not in scope else "refresh+jwt", "alg": "HS256"}).encode()
    )
    claims = {
        "scope": scope,
        "sub": did,
        "aud": "did:web:pds.bluesky.invalid",
        "iat": int(now.timestamp()),
        "exp": int((now + life).timestamp()),
        "jti": jti or secrets.token_hex(16),
    }
    body = _b64(json.dumps(claims).encode())
    sig = _b64(hmac.new(SECRET, f"{header}.{body}".encode(), hashlib.sha256).digest())
    return f"{header}.{body}.{sig}"


def claims_of(token: str) -> dict[str, Any] | None:
    try:
        header, body, sig = token.split(".")
    except ValueError:
        return None
    good = _b64(hmac.new(SECRET, f"{header}.{body}".encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(good, sig):
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def sniff(data: bytes, declared: str) -> str:
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp":
        return "video/quicktime" if data[8:10] == b"qt" else "video/mp4"
    return declared or "application/octet-stream"


class BlueskyEmulator(Emulator):
    platform = PLATFORM
    HOSTS = {"api": "https://pds.bluesky.invalid", "plc": "https://plc.bluesky.invalid"}
    SERVE_SETTINGS = ("SOCIALPUB_BLUESKY_PLC_URL",)  # the PLC directory is served on the same origin

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        x = r"/xrpc/"
        self.route("GET", r"/(?P<did>did:plc:[a-z2-7]+)", self.plc_document)
        self.route("GET", x + r"_health", lambda r: json_response(200, {"version": "sandbox"}))
        self.route("GET", x + r"com\.atproto\.server\.describeServer", self.describe_server)
        self.route("GET", x + r"com\.atproto\.identity\.resolveHandle", self.resolve_handle)
        self.route("POST", x + r"com\.atproto\.server\.createAccount", self.create_account)
        self.route("POST", x + r"com\.atproto\.server\.createAppPassword", self.create_app_password)
        self.route("POST", x + r"com\.atproto\.server\.createSession", self.create_session)
        self.route("POST", x + r"com\.atproto\.server\.refreshSession", self.refresh_session)
        self.route("GET", x + r"com\.atproto\.server\.getSession", self.get_session)
        self.route("POST", x + r"com\.atproto\.server\.deleteSession", self.delete_session)
        self.route("POST", x + r"com\.atproto\.repo\.uploadBlob", self.upload_blob)
        self.route("POST", x + r"com\.atproto\.repo\.createRecord", self.create_record)
        self.route("POST", x + r"com\.atproto\.repo\.putRecord", self.put_record)
        self.route("GET", x + r"com\.atproto\.repo\.getRecord", self.get_record)
        self.route("GET", x + r"com\.atproto\.repo\.listRecords", self.list_records)
        self.route("GET", x + r"(?P<nsid>app\.bsky\.[A-Za-z.]+)", self.appview)
        self.route("POST", x + r"(?P<nsid>app\.bsky\.[A-Za-z.]+)", self.appview)

    # --- identities ------------------------------------------------------------------------------------
    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        did = "did:plc:" + _b32(secrets.token_bytes(15))[:24]
        # a sandbox account's stored token: an app-password session that lives as long as the sandbox
        return did, mint(did, "com.atproto.appPass", timedelta(days=36500), datetime.now().astimezone())

    @staticmethod
    def handle_of(acc: SandboxAccount) -> str:
        name = acc.username.lower()
        return name if "." in name else re.sub(r"[^a-z0-9-]", "-", name).strip("-") + ".sandbox.test"

    def _by_handle(self, handle: str) -> SandboxAccount | None:
        handle = handle.lower()
        for acc in SandboxAccount.select().where(SandboxAccount.platform == PLATFORM):
            if self.handle_of(acc) == handle:
                return acc
        return None

    def _by_did(self, did: str) -> SandboxAccount | None:
        return SandboxAccount.get_or_none(
            (SandboxAccount.platform == PLATFORM) & (SandboxAccount.external_id == did)
        )

    def plc_document(self, request: Request, did: str) -> httpx.Response:
        acc = self._by_did(did)
        if acc is None:
            return json_response(404, {"message": f"DID not registered: {did}"})
        return json_response(
            200,
            {
                "@context": ["https://www.w3.org/ns/did/v1"],
                "id": did,
                "alsoKnownAs": [f"at://{self.handle_of(acc)}"],
                "verificationMethod": [],
                "service": [
                    {
                        "id": "#atproto_pds",
                        "type": "AtprotoPersonalDataServer",
                        "serviceEndpoint": self.HOSTS["api"],
                    }
                ],
            },
        )

    def describe_server(self, request: Request) -> httpx.Response:
        return json_response(
            200,
            {
                "did": "did:web:pds.bluesky.invalid",
                "availableUserDomains": [".test"],
                "inviteCodeRequired": False,
                "blobUploadLimit": self.blob_limit(),
                "links": {},
                "contact": {},
            },
        )

    def blob_limit(self) -> int:
        return int(self.option("blob_limit", DEFAULT_BLOB_LIMIT))

    def resolve_handle(self, request: Request) -> httpx.Response:
        handle = str(request.query.get("handle") or "")
        if not handle:
            return invalid('Params must have the property "handle"')
        acc = self._by_handle(handle)
        if acc is None:
            return xrpc_error(400, "HandleNotFound", "Unable to resolve handle")
        return json_response(200, {"did": acc.external_id})

    # --- sessions --------------------------------------------------------------------------------------
    def _session(
        self, did: str, scope: str, now: datetime | None = None, seed: str | None = None
    ) -> tuple[str, str]:
        """A new session; `seed` (the refresh token it replaces) and `now` (when that one was rotated) make the
        same pair again, as the PDS answers a refresh token reused within its grace."""
        now = now or self.now()
        jti = hashlib.sha256((seed or secrets.token_hex(16)).encode()).hexdigest()
        access = mint(did, scope, ACCESS_LIFE, now, jti[:32])
        refresh = mint(did, "com.atproto.refresh", REFRESH_LIFE, now, jti[32:])
        if seed is not None and get_item("ses_" + token_hash(refresh)[:40], PLATFORM) is not None:
            return access, refresh
        acc = self._by_did(did)
        assert acc is not None
        session_id = "ses_" + token_hash(refresh)[:40]
        new_item(PLATFORM, acc, "session", session_id, data={"scope": scope})
        # found by their ids (the tokens' SHA-256), no JSON query: the same on SQLite and PostgreSQL
        new_item(PLATFORM, acc, "access", "sat_" + token_hash(access)[:40], data={"session": session_id})
        return access, refresh

    def _session_body(self, acc: SandboxAccount, access: str, refresh: str) -> dict[str, Any]:
        return {
            "accessJwt": access,
            "refreshJwt": refresh,
            "handle": self.handle_of(acc),
            "did": acc.external_id,
            "email": f"{acc.username}@sandbox.invalid",
            "emailConfirmed": False,
            "active": True,
        }

    def authed(
        self, request: Request, *, refresh: bool = False, allow_expired: bool = False
    ) -> tuple[SandboxAccount, dict[str, Any]] | httpx.Response:
        """The account and claims of the request's bearer token, or the PDS's refusal. An access JWT is the
        reference PDS's: verified by itself until it expires, whatever became of its session (deleteSession
        revokes the refresh token only: packages/pds/src/api/com/atproto/server/deleteSession.ts,
        `revokeRefreshToken`); a refresh JWT must be its session's, still held. allow_expired: deleteSession's
        `authVerifier.refresh({ allowExpired: true })`."""
        token = request.bearer()
        if not token:
            return xrpc_error(401, "AuthMissing", "Authentication Required")
        claims = claims_of(token)
        if claims is None:
            return xrpc_error(400, "InvalidToken", "Token could not be verified")
        is_refresh = claims.get("scope") == "com.atproto.refresh"
        if is_refresh != refresh:
            return xrpc_error(400, "InvalidToken", "Invalid token type")
        if int(claims.get("exp") or 0) <= self.now().timestamp() and not allow_expired:
            return xrpc_error(400, "ExpiredToken", "Token has expired")
        acc = account_for_token(token)
        if acc is None:
            found = get_item(("ses_" if refresh else "sat_") + token_hash(token)[:40], PLATFORM)
            if found is None:
                return (
                    xrpc_error(400, "ExpiredToken", "Token has been revoked")
                    if refresh
                    else xrpc_error(400, "InvalidToken", "Token could not be verified")
                )
            acc = SandboxAccount.get_or_none(SandboxAccount.id == found.account_id)
            if acc is None:
                return xrpc_error(400, "InvalidToken", "Token could not be verified")
        if acc.behaviour == "fail-permanent":
            return xrpc_error(401, "AccountTakedown", "Account has been taken down")
        return acc, claims

    def create_account(self, request: Request) -> httpx.Response:
        body = request.json if isinstance(request.json, dict) else {}
        handle, password = str(body.get("handle") or "").lower(), body.get("password")
        if not handle or not isinstance(password, str):
            return invalid('Input must have the property "handle"' if not handle else "Password is required")
        if not handle.endswith(".test"):
            return xrpc_error(400, "UnsupportedDomain", "Not a supported handle domain")
        if self._by_handle(handle) is not None:
            return xrpc_error(400, "HandleNotAvailable", "Handle already taken: " + handle)
        did = "did:plc:" + _b32(secrets.token_bytes(15))[:24]
        with write():
            acc = SandboxAccount.create(
                id=new_account_id(),
                platform=PLATFORM,
                external_id=did,
                token_hash=token_hash(secrets.token_hex(32)),
                name=handle,
                username=handle,
                display_name=handle,
                behaviour="ok",
                created_at=self.now(),
            )
        new_item(PLATFORM, acc, "password", "pw_" + acc.id, data={"hash": token_hash(password)})
        access, refresh = self._session(did, "com.atproto.access")
        return json_response(200, {"handle": handle, "did": did, "accessJwt": access, "refreshJwt": refresh})

    def create_app_password(self, request: Request) -> httpx.Response:
        found = self.authed(request)
        if isinstance(found, httpx.Response):
            return found
        acc, claims = found
        if claims.get("scope") != "com.atproto.access":
            return xrpc_error(400, "InvalidToken", "Bad token scope")
        name = str((request.json or {}).get("name") or "") if isinstance(request.json, dict) else ""
        if not name:
            return invalid('Input must have the property "name"')
        password = "-".join(_b32(secrets.token_bytes(3))[:4] for _ in range(4))
        new_item(
            PLATFORM,
            acc,
            "app_password",
            f"ap_{acc.id}_{token_hash(password)[:16]}",
            data={"hash": token_hash(password), "name": name},
        )
        return json_response(200, {"name": name, "password": password, "createdAt": self.now().isoformat()})

    def create_session(self, request: Request) -> httpx.Response:
        body = request.json if isinstance(request.json, dict) else {}
        for key in ("identifier", "password"):
            if not isinstance(body.get(key), str):
                return invalid(f'Missing required key "{key}" at $')
        ident, password = body["identifier"].lower(), body["password"]
        acc = self._by_did(ident) if ident.startswith("did:") else self._by_handle(ident)
        refused = xrpc_error(401, "AuthenticationRequired", "Invalid identifier or password")
        if acc is None:
            return refused
        secrets_of = {
            i.kind: i
            for i in SandboxItem.select().where(
                (SandboxItem.platform == PLATFORM)
                & (SandboxItem.account_id == acc.id)
                & SandboxItem.kind.in_(("password", "app_password"))
            )
            if hmac.compare_digest(str(i.data.get("hash")), token_hash(password))
        }
        if "password" in secrets_of:
            scope = "com.atproto.access"
        elif "app_password" in secrets_of:
            scope = "com.atproto.appPass"
        else:
            return refused
        if acc.behaviour == "fail-permanent":
            return xrpc_error(401, "AccountTakedown", "Account has been taken down")
        access, refresh = self._session(acc.external_id, scope)
        return json_response(200, self._session_body(acc, access, refresh))

    def refresh_session(self, request: Request) -> httpx.Response:
        found = self.authed(request, refresh=True)
        if isinstance(found, httpx.Response):
            return found
        acc, _claims = found
        old = token_hash(request.bearer() or "")
        with write():
            item = get_item("ses_" + old[:40], PLATFORM)
            if item is None:
                return xrpc_error(400, "ExpiredToken", "Token has been revoked")
            scope = str(item.data.get("scope") or "com.atproto.appPass")
            rotated = item.data.get("rotated_at")
            if rotated is None:
                rotated = self.now().isoformat()
                SandboxItem.update(data={**item.data, "rotated_at": rotated}).where(
                    SandboxItem.id == item.id
                ).execute()
            at = datetime.fromisoformat(rotated)
            if self.now() - at > REFRESH_GRACE:
                SandboxItem.delete().where(SandboxItem.id == item.id).execute()
                return xrpc_error(400, "ExpiredToken", "Token has been revoked")
            access, refresh = self._session(acc.external_id, scope, at, request.bearer())
        return json_response(200, self._session_body(acc, access, refresh))

    def get_session(self, request: Request) -> httpx.Response:
        found = self.authed(request)
        if isinstance(found, httpx.Response):
            return found
        acc, _claims = found
        body = self._session_body(acc, "", "")
        body.pop("accessJwt")
        body.pop("refreshJwt")
        return json_response(200, body)

    def delete_session(self, request: Request) -> httpx.Response:
        """The session's refresh token revoked (a refresh after it: 400 ExpiredToken "Token has been revoked");
        its access JWTs stay valid until they expire, as on the reference PDS."""
        found = self.authed(request, refresh=True, allow_expired=True)
        if isinstance(found, httpx.Response):
            if (
                found.status_code == 400
                and json.loads(found.content).get("message") == "Token has been revoked"
            ):
                return httpx.Response(200)  # the reference PDS: closing a closed session again is a no-op 200
            return found
        with write():
            SandboxItem.delete().where(
                SandboxItem.id == "ses_" + token_hash(request.bearer() or "")[:40]
            ).execute()
        return httpx.Response(200)

    # --- blobs -----------------------------------------------------------------------------------------
    def upload_blob(self, request: Request) -> httpx.Response:
        found = self.authed(request)
        if isinstance(found, httpx.Response):
            return found
        acc, _claims = found
        data = request.content
        if len(data) > self.blob_limit():
            return xrpc_error(413, "PayloadTooLarge", "request entity too large")
        mime = sniff(data, request.header("content-type").split(";")[0].strip())
        cid = blob_cid(data)
        blob_id = f"blob:{acc.external_id}:{cid}"
        if get_item(blob_id, PLATFORM) is None:
            new_item(
                PLATFORM,
                acc,
                "blob",
                blob_id,
                data={"mimeType": mime, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()},
            )
        return json_response(
            200, {"blob": {"$type": "blob", "ref": {"$link": cid}, "mimeType": mime, "size": len(data)}}
        )

    # --- records ---------------------------------------------------------------------------------------
    def _write_input(self, request: Request) -> tuple[SandboxAccount, dict[str, Any]] | httpx.Response:
        found = self.authed(request)
        if isinstance(found, httpx.Response):
            return found
        acc, _claims = found
        body = request.json if isinstance(request.json, dict) else None
        if body is None:
            return invalid("Request body must be JSON")
        for key in ("repo", "collection", "record"):
            if key not in body:
                return invalid(f'Input must have the property "{key}"')
        if body["repo"] not in (acc.external_id, self.handle_of(acc)):
            return xrpc_error(403, "AuthRequired", "Invalid repo")  # @atproto/pds: writes to another repo
        if body["collection"] != COLLECTION:
            return invalid(f"Unsupported collection in this sandbox: {body['collection']}")
        rkey = body.get("rkey")
        if rkey is not None:
            if not isinstance(rkey, str) or not RKEY.match(rkey) or rkey in (".", ".."):
                return invalid(f'Invalid record key (got "{rkey}") at $.rkey')
            if not TID.match(rkey):
                return invalid(f'Invalid record key for {COLLECTION}: Invalid TID string (got "{rkey}") at $')
        if acc.behaviour in ("fail-retriable", "rate-limited", "flaky"):
            g = gate(acc)
            if g == Gate.RATE:
                reset = int(self.now().timestamp()) + 3600
                return xrpc_error(
                    429,
                    "RateLimitExceeded",
                    "Rate Limit Exceeded",
                    {
                        "ratelimit-limit": "5000",
                        "ratelimit-remaining": "0",
                        "ratelimit-reset": str(reset),
                        "ratelimit-policy": "5000;w=3600",
                    },
                )
            if g == Gate.RETRIABLE:
                return xrpc_error(502, "UpstreamFailure", "Upstream service unreachable")
        if body.get("validate") is not False:
            problem = self.validate(acc, body["record"])
            if problem is not None:
                return invalid(f"Invalid {COLLECTION} record: {problem}")
        return acc, body

    def validate(self, acc: SandboxAccount, rec: Any) -> str | None:
        """The lexicon's checks of app.bsky.feed.post, in the PDS's words (None: valid)."""
        if not isinstance(rec, dict):
            return "Record must be an object at $.record"
        if rec.get("$type", COLLECTION) != COLLECTION:
            return f"Invalid $type: expected {COLLECTION}, got {rec.get('$type')}"
        t = rec.get("text")
        if not isinstance(t, str):
            return 'Missing required key "text" at $.record'
        if len(t.encode()) > 3000:
            return f"string too big (maximum 3000, got {len(t.encode())}) at $.record.text"
        if graphemes(t) > 300:
            return f"grapheme too big (maximum 300, got {graphemes(t)}) at $.record.text"
        created = rec.get("createdAt")
        if created is None:
            return 'Missing required key "createdAt" at $.record'
        if not isinstance(created, str) or not DATETIME.match(created):
            return f'Invalid datetime (got "{created}") at $.record.createdAt'
        langs = rec.get("langs")
        if langs is not None:
            if not isinstance(langs, list) or len(langs) > 3:
                return f"array too big (maximum 3, got {len(langs) if isinstance(langs, list) else '?'}) at $.record.langs"
            for i, lang in enumerate(langs):
                if not isinstance(lang, str) or not LANG.match(lang):
                    return f'Invalid language (got "{lang}") at $.record.langs[{i}]'
        for i, facet in enumerate(rec.get("facets") or []):
            problem = self._facet(facet, f"$.record.facets[{i}]")
            if problem:
                return problem
        embed = rec.get("embed")
        if embed is not None:
            return self._embed(acc, embed)
        return None

    def _facet(self, facet: Any, at: str) -> str | None:
        index = facet.get("index") if isinstance(facet, dict) else None
        if not isinstance(index, dict) or not all(
            isinstance(index.get(k), int) for k in ("byteStart", "byteEnd")
        ):
            return f'Missing required key "index" at {at}'
        for j, f in enumerate(facet.get("features") or []):
            kind = f.get("$type") if isinstance(f, dict) else None
            where = f"{at}.features[{j}]"
            if kind == "app.bsky.richtext.facet#link":
                uri = f.get("uri")
                if not isinstance(uri, str) or not re.match(r"^[a-z][a-z0-9+.-]*:\S+$", uri):
                    return f'Invalid uri (got "{uri}") at {where}.uri'
            elif kind == "app.bsky.richtext.facet#mention":
                did = f.get("did")
                if not isinstance(did, str) or not DID.match(did):
                    return f'Invalid DID (got "{did}") at {where}.did'
            elif kind == "app.bsky.richtext.facet#tag":
                tag = f.get("tag")
                if not isinstance(tag, str):
                    return f'Missing required key "tag" at {where}'
                if graphemes(tag) > 64:
                    return f"grapheme too big (maximum 64, got {graphemes(tag)}) at {where}.tag"
        return None

    def _blob_ref(self, acc: SandboxAccount, blob: Any, at: str, accept: str, max_size: int) -> str | None:
        if not isinstance(blob, dict) or not isinstance(blob.get("ref"), dict):
            return f"Expected blob at {at}"
        cid = str(blob["ref"].get("$link") or "")
        held = get_item(f"blob:{acc.external_id}:{cid}", PLATFORM)
        if held is None:
            return f"BlobNotFound:{cid}"
        mime, size = str(held.data.get("mimeType")), int(held.data.get("size") or 0)
        if not (mime == accept or (accept.endswith("/*") and mime.startswith(accept[:-1]))):
            return f'Expected "{accept}" (got "{mime}") at {at}.mimeType'
        if size > max_size:
            return f"blob too big (maximum {max_size}, got {size}) at {at}"
        return None

    def _aspect(self, ratio: Any, at: str) -> str | None:
        if ratio is None:
            return None
        for k in ("width", "height"):
            v = ratio.get(k) if isinstance(ratio, dict) else None
            if not isinstance(v, int):
                return f'Missing required key "{k}" at {at}'
            if v < 1:
                return f"integer too small (minimum 1, got {v}) at {at}.{k}"
        return None

    def _embed(self, acc: SandboxAccount, embed: Any) -> str | None:
        kind = embed.get("$type") if isinstance(embed, dict) else None
        at = "$.record.embed"
        if kind == "app.bsky.embed.images":
            imgs = embed.get("images")
            if not isinstance(imgs, list):
                return f'Missing required key "images" at {at}'
            if len(imgs) > 4:
                return f"array too big (maximum 4, got {len(imgs)}) at {at}.images"
            for i, img in enumerate(imgs):
                where = f"{at}.images[{i}]"
                if not isinstance(img, dict) or "image" not in img:
                    return f'Missing required key "image" at {where}'
                if not isinstance(img.get("alt"), str):
                    return f'Missing required key "alt" at {where}'
                problem = self._blob_ref(
                    acc, img["image"], f"{where}.image", "image/*", IMAGE_MAX
                ) or self._aspect(img.get("aspectRatio"), f"{where}.aspectRatio")
                if problem:
                    return problem
            return None
        if kind == "app.bsky.embed.external":
            ext = embed.get("external")
            if not isinstance(ext, dict):
                return f'Missing required key "external" at {at}'
            for key in ("uri", "title", "description"):
                if not isinstance(ext.get(key), str):
                    return f'Missing required key "{key}" at {at}.external'
            if "thumb" in ext:
                return self._blob_ref(acc, ext["thumb"], f"{at}.external.thumb", "image/*", THUMB_MAX)
            return None
        if kind == "app.bsky.embed.video":
            return self._blob_ref(
                acc, embed.get("video"), f"{at}.video", "video/mp4", VIDEO_MAX
            ) or self._aspect(embed.get("aspectRatio"), f"{at}.aspectRatio")
        return f"Unsupported embed type in this sandbox: {kind} at {at}"

    def _refusal(self, problem_response: httpx.Response) -> httpx.Response:
        body = json.loads(problem_response.content)
        message = str(body.get("message") or "")
        marker = message.find("BlobNotFound:")
        if marker >= 0:
            return xrpc_error(400, "BlobNotFound", "Could not find blob: " + message[marker + 13 :])
        return problem_response

    def _store(self, acc: SandboxAccount, rkey: str, record: dict[str, Any]) -> dict[str, Any]:
        uri = f"at://{acc.external_id}/{COLLECTION}/{rkey}"
        cid = record_cid(record)
        new_item(
            PLATFORM,
            acc,
            "post",
            uri,
            text=str(record.get("text") or ""),
            post_id=rkey,
            url=f"https://bsky.app/profile/{acc.external_id}/post/{rkey}",
            state="published",
            data={"record": record, "cid": cid},
        )
        rev = _b32(secrets.token_bytes(8))[:13]
        return {
            "uri": uri,
            "cid": cid,
            "commit": {"cid": record_cid({"rev": rev}), "rev": rev},
            "validationStatus": "valid",
        }

    def create_record(self, request: Request) -> httpx.Response:
        got = self._write_input(request)
        if isinstance(got, httpx.Response):
            return self._refusal(got)
        acc, body = got
        rkey = body.get("rkey") or _tid_now(self.now())
        with exclusive(acc):
            if get_item(f"at://{acc.external_id}/{COLLECTION}/{rkey}", PLATFORM) is not None:
                return (
                    internal_error()
                )  # the PDS: a second createRecord at one key is a 500, no second record
            return json_response(200, self._store(acc, rkey, body["record"]))

    def put_record(self, request: Request) -> httpx.Response:
        got = self._write_input(request)
        if isinstance(got, httpx.Response):
            return self._refusal(got)
        acc, body = got
        rkey = body.get("rkey")
        if not isinstance(rkey, str):
            return invalid('Input must have the property "rkey"')
        uri = f"at://{acc.external_id}/{COLLECTION}/{rkey}"
        with exclusive(acc):
            held = get_item(uri, PLATFORM)
            swap = body.get("swapRecord", "absent")
            if held is not None:
                cid = str(held.data.get("cid"))
                if record_cid(body["record"]) == cid:
                    return json_response(200, {"uri": uri, "cid": cid, "validationStatus": "valid"})  # no-op
                if swap is None or (isinstance(swap, str) and swap not in ("absent", cid)):
                    return xrpc_error(400, "InvalidSwap", f"Record was at {cid}")
                with write():
                    SandboxItem.delete().where(SandboxItem.id == uri).execute()
            elif isinstance(swap, str) and swap != "absent":
                return xrpc_error(400, "InvalidSwap", "Record was at null")
            return json_response(200, self._store(acc, rkey, body["record"]))

    def get_record(self, request: Request) -> httpx.Response:
        q = request.query
        for key in ("repo", "collection", "rkey"):
            if not q.get(key):
                return invalid(f'Params must have the property "{key}"')
        rkey = q["rkey"]
        if not RKEY.match(rkey):
            return invalid(f'Invalid com.atproto.repo.getRecord params: Invalid record key (got "{rkey}")')
        acc = self._by_did(q["repo"]) if q["repo"].startswith("did:") else self._by_handle(q["repo"])
        did = acc.external_id if acc is not None else q["repo"]
        uri = f"at://{did}/{q['collection']}/{rkey}"
        held = get_item(uri, PLATFORM)
        if held is None:
            return xrpc_error(400, "RecordNotFound", f"Could not locate record: {uri}")
        return json_response(200, {"uri": uri, "cid": held.data.get("cid"), "value": held.data.get("record")})

    def list_records(self, request: Request) -> httpx.Response:
        q = request.query
        acc = self._by_did(q.get("repo", "")) or self._by_handle(q.get("repo", ""))
        if acc is None:
            return invalid(f"Could not find repo: {q.get('repo')}")
        items = (
            SandboxItem.select()
            .where(
                (SandboxItem.platform == PLATFORM)
                & (SandboxItem.account_id == acc.id)
                & (SandboxItem.kind == "post")
            )
            .order_by(SandboxItem.post_id.desc())
            .limit(min(100, int(q.get("limit") or 50)))
        )
        return json_response(
            200,
            {
                "records": [
                    {"uri": i.id, "cid": i.data.get("cid"), "value": i.data.get("record")} for i in items
                ]
            },
        )

    def appview(self, request: Request, nsid: str) -> httpx.Response:
        # a bare PDS proxies app.bsky.* to its AppView; the sandbox has none (the reference PDS without one: 502)
        return xrpc_error(502, "UpstreamFailure", "Upstream service unreachable")


def _tid_now(now: datetime) -> str:
    """A TID of now (the PDS's own key when the caller gives none)."""
    value = (int(now.timestamp() * 1_000_000) << 10) | secrets.randbelow(1024)
    alphabet = "234567abcdefghijklmnopqrstuvwxyz"
    return "".join(alphabet[(value >> (5 * i)) & 31] for i in range(12, -1, -1))
