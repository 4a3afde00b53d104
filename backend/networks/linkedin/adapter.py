"""LinkedIn versioned REST adapter (NETWORKS.md section 4; every rule's source: the fidelity table of docs.md).

Headers on every API call: Authorization Bearer, LinkedIn-Version (an active version: lifecycle.py),
X-Restli-Protocol-Version 2.0.0, Content-Type application/json; the upload URLs take plain PUTs (Bearer and
the media's own type). image: /images?action=initializeUpload -> PUT uploadUrl -> poll /images/{urn} AVAILABLE
-> /posts; carousel: the PDF of linkedin_pdf through /documents; video: /videos initializeUpload -> PUT parts
(ETags) -> finalizeUpload -> poll; text: /posts. The post URN comes back in x-restli-id (201, empty body).
Commentary is escaped in LinkedIn's "little text" format.

An asset still PROCESSING when publish() returns is tracked: check_status answers `ready` once it is
AVAILABLE and complete() makes the /posts call (an attempt of its own: an asset URN can be posted any number
of times, so a repeated /posts call would post twice). A configured version LinkedIn no longer serves is a
configuration error before any call. find_existing pages the author's posts, which list a post as soon as
/posts answered 201 — but only for an app holding r_member_social (members: restricted to approved partners)
or r_organization_social (organisations: the Community Management API): LinkedIn refuses the listing to any
other app (403), and find_existing then raises Unverifiable (never "absent", which would post twice).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from backend import clock
from backend.networks.base import (
    MAX_LISTING_PAGES,
    PAGES_WITHOUT_WINDOW,
    NetworkError,
    Publication,
    PublishOutcome,
    Unverifiable,
    check_failed,
    decode_ref,
    encode_ref,
)
from backend.networks.factory import AdapterContext
from backend.networks.http import json_or_none, send
from backend.networks.linkedin import NETWORK
from backend.networks.linkedin.lifecycle import DEFAULT_VERSION, LIFECYCLE
from backend.networks.linkedin.pdf import build_carousel_pdf
from backend.networks.linkedin.rules import escape_commentary
from backend.networks.media_loader import MediaLoader

PLATFORM = NETWORK.name
LISTING_DELAY_S = NETWORK.listing_delay_s  # /rest/posts?q=author lists a post once created


# An attempt's saved progress (Publication.saved, stored with the target before the next call): which of its calls
# it had reached. Only STAGE_POST's call creates a post; an attempt interrupted at STAGE_UPLOAD made assets only.
STAGE_UPLOAD = "upload"
STAGE_POST = "post"


def post_url(urn: str) -> str:
    return f"https://www.linkedin.com/feed/update/{urn}/"


def _seconds_to_utc_midnight() -> float:
    from datetime import timedelta

    now = clock.now()
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1.0, (tomorrow - now).total_seconds())


def classify(resp: httpx.Response) -> NetworkError:
    body = json_or_none(resp)
    body = body if isinstance(body, dict) else {}
    message = str(body.get("message") or "").strip()
    code = str(body.get("code") or body.get("serviceErrorCode") or resp.status_code)
    s = resp.status_code
    if s == 401:
        return NetworkError(
            "permanent",
            "the LinkedIn access token is invalid or expired: reconnect the account",
            code=code,
            http_status=s,
            auth_refused=True,
        )
    if s == 426 or code == "NONEXISTENT_VERSION":
        return NetworkError(
            "permanent",
            f"LinkedIn no longer serves the API version socialpub sends ({message or code}): set "
            f"{LIFECYCLE.setting} to an active version (or unset it to use {LIFECYCLE.default}); "
            "`socialpub accounts doctor linkedin` lists them",
            code=code,
            http_status=s,
        )
    if s == 403:
        return NetworkError(
            "permanent",
            f"LinkedIn refused the permission ({message or code}): the app's LinkedIn products do not grant "
            "it, or the account was connected without it (a member posts with w_member_social, from the "
            "'Share on LinkedIn' product; an organisation with w_organization_social, from the Community "
            "Management API): `socialpub accounts doctor linkedin` says which",
            code=code,
            http_status=s,
        )
    if s == 429:
        return NetworkError(
            "retriable",
            "LinkedIn's daily limit was reached; it resets at midnight UTC",
            code=code,
            http_status=s,
            retry_after_s=_seconds_to_utc_midnight(),
            wait=True,
        )
    if s >= 500:
        return NetworkError(
            "retriable",
            f"LinkedIn is temporarily unavailable (HTTP {s}); it will be retried",
            code=code,
            http_status=s,
        )
    return NetworkError(
        "permanent", f"LinkedIn refused the request (HTTP {s}): {message or code}", code=code, http_status=s
    )


class LinkedInAdapter:
    platform = PLATFORM

    def __init__(
        self,
        client: httpx.Client,
        base_url: str = "https://api.linkedin.com/rest",
        *,
        version: str = DEFAULT_VERSION,
        media_loader: MediaLoader | None = None,
    ) -> None:
        self.client = client
        self.base = base_url.rstrip("/")
        self.version = version
        self.media_loader = media_loader

    def _headers(self, token: str) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {token}",
            "LinkedIn-Version": self.version,
            "X-Restli-Protocol-Version": "2.0.0",
            "Content-Type": "application/json",
        }

    def _version_error(self) -> NetworkError | None:
        """The configured version, when LinkedIn does not serve it today: a configuration error, before any
        call (rather than each call refused 426)."""
        st = LIFECYCLE.state(self.version, clock.now().date())
        if st.status not in ("sunset", "unknown"):
            return None
        when = f"ended on {st.sunset}" if st.status == "sunset" else "is not one LinkedIn is known to serve"
        return NetworkError(
            "permanent",
            f"LinkedIn API version {self.version} {when}: set {LIFECYCLE.setting} to an active version "
            f"(or unset it to use {st.newest}); `socialpub accounts doctor linkedin` lists them",
            code=f"api_version_{st.status}",
        )

    def _call(
        self, method: str, path_or_url: str, token: str, *, write: bool = False, **kw: Any
    ) -> httpx.Response:
        url = path_or_url if path_or_url.startswith("http") else self.base + path_or_url
        resp = send(
            self.client, method, url, network="LinkedIn", write=write, headers=self._headers(token), **kw
        )
        if resp.status_code >= 400:
            raise classify(resp)
        return resp

    def _put_bytes(self, url: str, token: str, data: bytes, mime: str) -> httpx.Response:
        """A plain binary PUT to an upload URL: the bearer token and the media's type, no API headers."""
        resp = send(
            self.client,
            "PUT",
            url,
            network="LinkedIn",
            write=True,
            headers={"Authorization": f"Bearer {token}", "Content-Type": mime},
            content=data,
        )
        if resp.status_code >= 400:
            raise classify(resp)
        return resp

    def _load(self, media: Any) -> bytes:
        if self.media_loader is None:
            raise NetworkError(
                "permanent", "no media loader configured for LinkedIn uploads", code="no_loader"
            )
        return self.media_loader(media)

    # --- assets -------------------------------------------------------------------------------------
    def upload_asset(
        self, pub: Publication, kind: str, data: bytes, mime: str = "application/octet-stream"
    ) -> str:
        """kind: images | documents | videos; mime: the bytes' type (the PUTs'). Returns the asset URN."""
        token, owner = pub.account.access_token, pub.account.external_account_id
        req: dict[str, Any] = {"owner": owner}
        if kind == "videos":
            req.update(fileSizeBytes=len(data), uploadCaptions=False, uploadThumbnail=False)
        value = self._call(
            "POST",
            f"/{kind}?action=initializeUpload",
            token,
            write=True,
            json={"initializeUploadRequest": req},
        ).json()["value"]
        if kind != "videos":
            self._put_bytes(value["uploadUrl"], token, data, mime)
            return str(value["image" if kind == "images" else "document"])
        etags = []
        for part in value.get("uploadInstructions") or []:
            chunk = data[int(part["firstByte"]) : int(part["lastByte"]) + 1]
            r = self._put_bytes(part["uploadUrl"], token, chunk, mime)
            etags.append(r.headers.get("etag", ""))
        self._call(
            "POST",
            "/videos?action=finalizeUpload",
            token,
            write=True,
            json={
                "finalizeUploadRequest": {
                    "video": value["video"],
                    "uploadToken": value.get("uploadToken", ""),
                    "uploadedPartIds": etags,
                }
            },
        )
        return str(value["video"])

    def asset_status(self, pub: Publication, urn: str) -> str:
        kind = {"image": "images", "document": "documents", "video": "videos"}[urn.split(":")[2]]
        body = self._call("GET", f"/{kind}/{quote(urn, safe='')}", pub.account.access_token).json()
        return str(body.get("status") or "")

    def create_post(self, pub: Publication, content: dict[str, Any] | None) -> str:
        body: dict[str, Any] = {
            "author": pub.account.external_account_id,
            "commentary": escape_commentary(pub.payload.text),
            "visibility": str(pub.payload.options.get("visibility") or "PUBLIC"),
            "distribution": {
                "feedDistribution": "MAIN_FEED",
                "targetEntities": [],
                "thirdPartyDistributionChannels": [],
            },
            "lifecycleState": "PUBLISHED",
            "isReshareDisabledByAuthor": False,
        }
        if content:
            body["content"] = content
        resp = self._call("POST", "/posts", pub.account.access_token, write=True, json=body)
        urn: str | None = resp.headers.get("x-restli-id")
        if not urn:
            raise NetworkError(
                "retriable",
                "LinkedIn accepted the post without returning its id",
                code="no_id",
                ambiguous=True,
            )
        return urn

    # --- protocol -----------------------------------------------------------------------------------
    def _content(self, pub: Publication, urn: str) -> dict[str, Any]:
        if pub.payload.kind == "document":
            return {"media": {"title": pub.payload.title or "Carousel", "id": urn}}
        return {"media": {"id": urn}}

    def _advance(self, pub: Publication, state: dict[str, Any], *, post: bool) -> PublishOutcome:
        """The asset's state; once AVAILABLE, the /posts call when `post` (publish), else `ready` (a status
        check never posts)."""
        urn = state.get("asset")
        ref = encode_ref(**state)
        if urn:
            status = self.asset_status(pub, urn)
            if status == "PROCESSING_FAILED":
                return PublishOutcome.failed(
                    "permanent",
                    "LinkedIn could not process the media: check its format "
                    "(images JPG/PNG/GIF, documents PDF)",
                    network_status=status,
                    tracking_ref=ref,
                )
            if status != "AVAILABLE":
                return PublishOutcome.pending(ref, network_status=status or "PROCESSING")
        if not post:
            return PublishOutcome.ready(ref, network_status="AVAILABLE")
        return self._post(pub, state)

    def _post(self, pub: Publication, state: dict[str, Any]) -> PublishOutcome:
        urn = state.get("asset")
        # saved before POST /rest/posts (the only call that creates a post): from here an interruption may have
        # posted, and find_existing cannot ask a new app's LinkedIn (Unverifiable)
        pub.saved(encode_ref(**state, stage=STAGE_POST))
        post = self.create_post(pub, self._content(pub, urn) if urn else None)
        return PublishOutcome.published(post, post_url(post), tracking_ref=encode_ref(**state))

    def publish(self, pub: Publication) -> PublishOutcome:
        p = pub.payload
        try:
            version_error = self._version_error()
            if version_error is not None:
                raise version_error
            if p.kind == "text":
                return self._advance(pub, {}, post=True)
            # saved before the first upload call: an attempt interrupted from here until _post's own save created
            # assets only, never a post, and its successor publishes without asking LinkedIn (find_existing)
            pub.saved(encode_ref(stage=STAGE_UPLOAD))
            if p.kind == "document":
                pdf = build_carousel_pdf([self._load(m) for m in p.media])
                urn = self.upload_asset(pub, "documents", pdf, "application/pdf")
            else:
                media = p.media[0]
                kind = "videos" if p.kind == "video" else "images"
                urn = self.upload_asset(
                    pub, kind, self._load(media), media.mime or "application/octet-stream"
                )
            return self._advance(pub, {"asset": urn}, post=True)
        except NetworkError as e:
            return e.outcome()
        except (OSError, ValueError) as e:
            return PublishOutcome.failed("permanent", f"could not prepare the media for LinkedIn: {e}")

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        try:
            version_error = self._version_error()
            if version_error is not None:
                raise version_error
            return self._advance(pub, decode_ref(ref), post=False)
        except NetworkError as e:
            return e.outcome(tracking_ref=ref)

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        """The /posts call of a tracked publication whose asset check_status found AVAILABLE."""
        try:
            version_error = self._version_error()
            if version_error is not None:
                raise version_error
            return self._post(pub, decode_ref(ref))
        except NetworkError as e:
            return e.outcome(tracking_ref=ref)

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        """An attempt whose saved stage (pub.resume) says it never reached POST /rest/posts made no post: None at
        once. Otherwise: pages /rest/posts?author=…&q=author (newest first, `start`/`count`) back to the attempt's start,
        matching the commentary; a post another target holds (`pub.held_elsewhere`) is skipped.
        LinkedIn refusing the listing (403: the app holds no r_member_social / r_organization_social) raises
        Unverifiable: the target then fails saying to check the account, and is never posted twice."""
        if not pub.resume or decode_ref(pub.resume).get("stage") == STAGE_UPLOAD:
            # our own record: "upload" is saved before the attempt's uploads and replaced by "post" right before
            # POST /rest/posts, the one call that creates a post; nothing saved, the attempt was cut off before
            # either. No post either way: the listing (or a new app's Unverifiable) is not asked
            return None
        version_error = self._version_error()
        if version_error is not None:
            return check_failed("LinkedIn", version_error)
        author = quote(pub.account.external_account_id, safe="")
        expected = escape_commentary(pub.payload.text).strip()
        since = pub.not_before()
        count, start = 100, 0
        try:
            for _ in range(MAX_LISTING_PAGES if since is not None else PAGES_WITHOUT_WINDOW):
                resp = self._call(
                    "GET",
                    f"/posts?author={author}&q=author&count={count}&start={start}&sortBy=CREATED",
                    pub.account.access_token,
                )
                elements = (json_or_none(resp) or {}).get("elements") or []
                for el in elements:
                    if since is not None and int(el.get("createdAt") or 0) / 1000 < since.timestamp():
                        return None
                    created = int(el.get("createdAt") or 0) / 1000
                    if str(el.get("id")) in pub.held_elsewhere or (
                        created and pub.made_later(datetime.fromtimestamp(created, UTC))
                    ):
                        continue  # another target's post, whatever its commentary
                    if str(el.get("commentary") or "").strip() == expected:
                        return PublishOutcome.published(
                            str(el["id"]),
                            post_url(str(el["id"])),
                            listed_at=datetime.fromtimestamp(created, UTC) if created else clock.now(),
                        )
                if len(elements) < count:
                    return None
                start += len(elements)
        except NetworkError as e:
            if e.http_status == 403:
                person = not pub.account.external_account_id.startswith("urn:li:organization:")
                scope = "r_member_social" if person else "r_organization_social"
                raise Unverifiable(
                    f"LinkedIn does not let this app read the account's posts back ({scope}"
                    + (
                        ", restricted to LinkedIn's approved partners)"
                        if person
                        else ", from the Community Management API)"
                    )
                    + ": check the account's LinkedIn activity before publishing it again"
                ) from e
            return check_failed("LinkedIn", e)
        return None


def make_adapter(ctx: AdapterContext) -> LinkedInAdapter:
    """The registry's factory: the API version of its settings (SOCIALPUB_LINKEDIN_VERSION)."""
    version = ctx.settings.version if ctx.settings is not None else DEFAULT_VERSION
    return LinkedInAdapter(ctx.client, ctx.host("api"), version=version, media_loader=ctx.media_loader)
