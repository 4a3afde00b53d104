"""Mastodon adapter (fidelity table: docs.md): one post = one status on the account's instance.

Where: the account's external id is `<id>@<instance host>` (accounts connect keeps it so), so one adapter serves
every instance; a loopback instance (a served emulator) is spoken to over http, any other over https.

Media: each uploaded with `POST /api/v2/media` (the file and its alt text as `description`) and saved as the
attempt's progress at once (a later attempt reuses the ids instead of uploading again). An image is ready at once
(200); a video answers 202 and is followed with `GET /api/v1/media/:id` (206 processing, 200 ready, 422 failed):
while one is processing the publication is `pending`, check_status follows it to `ready`, and `complete` posts.

The status: `POST /api/v1/statuses` with `Idempotency-Key` derived from the target (reconcile.idempotency_key,
stable across attempts): within the instance's hour a retry is answered the first status, never a second one. A
cut or a 5xx on that call is ambiguous (the engine reconciles before a new call). Visibility, content warning
(`spoiler_text`, which also marks the status sensitive) and language are sent; what the instance changed of them
(a silenced account's public status made unlisted, a language it did not keep) comes back as warnings.

Reconciliation (find_existing): the account's statuses (`GET /api/v1/accounts/:id/statuses`, newest first, 40 a
page, back to the attempt's start), matched by reconcile.is_ours (source text and content warning from
`/api/v1/statuses/:id/source`, socialpub's application, the time window). Refusals: refusal.refusal (status
first; a 429 waits until `X-RateLimit-Reset`)."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from typing import Any

import httpx

from backend.clock import to_utc
from backend.networks.base import (
    MAX_LISTING_PAGES,
    PAGES_WITHOUT_WINDOW,
    MediaRef,
    NetworkError,
    Publication,
    PublishOutcome,
    TargetWarning,
    check_failed,
    decode_ref,
    encode_ref,
)
from backend.networks.factory import AdapterContext
from backend.networks.http import json_or_none, send
from backend.networks.mastodon import NETWORK
from backend.networks.mastodon.connect import CLIENT_NAME
from backend.networks.mastodon.instance import InstanceLimits, NotAnInstance, parse_instance
from backend.networks.mastodon.media import media_state, read_back_warnings
from backend.networks.mastodon.options import MastodonOptions
from backend.networks.mastodon.reconcile import CLOCK_SLACK_S, idempotency_key, is_ours
from backend.networks.mastodon.refusal import NOT_PROCESSED, message_of, refusal
from backend.networks.mastodon.rules import check
from backend.networks.media_loader import MediaLoader
from backend.outbound.guard import host_is_local

PLATFORM = NETWORK.name
LABEL = NETWORK.label
PAGE = 40  # "Max 40 statuses."
# a media still processing right after its upload is looked at again once, this much later
INLINE_POLL_S = 2.0
LIMITS_CACHE_S = 3600.0  # an instance's /api/v2/instance is read again after an hour


def where(external_account_id: str) -> tuple[str, str]:
    """(the account's id at its instance, the instance's host) from socialpub's external id `<id>@<host>`."""
    account_id, sep, host = external_account_id.partition("@")
    if not sep or not account_id or not host:
        raise NetworkError(
            "permanent",
            f"the {LABEL} account {external_account_id!r} has no instance: reconnect it with "
            "`socialpub accounts connect mastodon --instance HOST`",
            code="no_instance",
        )
    return account_id, host


def base_url(host: str) -> str:
    """https://HOST, or http://HOST for an instance on this machine (a served emulator)."""
    name = host.rsplit(":", 1)[0].strip("[]") if host.count(":") <= 1 or host.startswith("[") else host
    return f"{'http' if host_is_local(name) else 'https'}://{host}"


def _created_at(status: dict[str, Any]) -> datetime | None:
    raw = status.get("created_at")
    if not isinstance(raw, str):
        return None
    try:
        return to_utc(datetime.fromisoformat(raw.replace("Z", "+00:00")))
    except ValueError:
        return None


class MastodonAdapter:
    platform = PLATFORM

    def __init__(self, client: httpx.Client, media_loader: MediaLoader | None = None) -> None:
        self.client = client
        self.media_loader = media_loader
        self._limits: dict[str, tuple[float, InstanceLimits]] = {}
        self._lock = threading.Lock()

    # --- the instance's own limits ---------------------------------------------------------------------------------
    def limits(self, pub: Publication) -> InstanceLimits | None:
        """The account's instance's limits (`GET /api/v2/instance`, public), cached an hour; None when it cannot
        say (the publication then meets the instance's own refusal, if any)."""
        host = where(pub.account.external_account_id)[1]
        with self._lock:
            cached = self._limits.get(host)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        try:
            resp = send(self.client, "GET", f"{base_url(host)}/api/v2/instance", network=LABEL)
            found = parse_instance(json_or_none(resp)) if resp.status_code == 200 else None
        except (NetworkError, NotAnInstance):
            found = None
        if found is not None:
            with self._lock:
                self._limits[host] = (time.monotonic() + LIMITS_CACHE_S, found)
        return found

    def refused_by_instance(self, pub: Publication) -> PublishOutcome | None:
        """The post checked against its instance's limits before anything is uploaded (rules.check): a failure
        naming the instance's limit, None when it fits (or the limits could not be read)."""
        limits = self.limits(pub)
        if limits is None:
            return None
        o = pub.payload.options
        options = MastodonOptions(spoiler_text=o.get("spoiler_text") or None, alt=o.get("alt") or None)
        problems = check(limits, pub.payload.text, pub.payload.media, options)
        if not problems:
            return None
        return PublishOutcome.failed(
            "permanent", "; ".join(reason for _code, reason in problems), network_code=problems[0][0]
        )

    # --- calls -----------------------------------------------------------------------------------------------------
    def _call(
        self, pub: Publication, method: str, path: str, *, write: bool = False, **kw: Any
    ) -> httpx.Response:
        _account_id, host = where(pub.account.external_account_id)
        headers = {"Authorization": f"Bearer {pub.account.access_token}", **(kw.pop("headers", None) or {})}
        return send(
            self.client, method, f"{base_url(host)}{path}", network=LABEL, write=write, headers=headers, **kw
        )

    def _json(self, pub: Publication, resp: httpx.Response, *ok: int) -> Any:
        if resp.status_code not in (ok or (200,)):
            raise refusal(resp, where(pub.account.external_account_id)[1])
        return json_or_none(resp)

    # --- media -----------------------------------------------------------------------------------------------------
    def _upload(self, pub: Publication, media: MediaRef, alt: str) -> tuple[str, str]:
        """(media id, state) of one uploaded media."""
        if self.media_loader is None:
            raise NetworkError(
                "permanent", f"{LABEL} needs the media's bytes: no media loader", code="no_loader"
            )
        data = self.media_loader(media)
        name = "file." + ((media.mime or "").split("/")[-1] or "bin")
        form = {"description": alt} if alt else {}
        resp = self._call(
            pub,
            "POST",
            "/api/v2/media",
            write=True,
            files={"file": (name, data, media.mime or "application/octet-stream")},
            data=form,
        )
        host = where(pub.account.external_account_id)[1]
        if resp.status_code not in (200, 202):
            raise refusal(resp, host)
        body = json_or_none(resp)
        state = media_state(resp.status_code, body, host)
        return str(body["id"]), state

    def _media_state(self, pub: Publication, media_id: str) -> str:
        resp = self._call(pub, "GET", f"/api/v1/media/{media_id}")
        host = where(pub.account.external_account_id)[1]
        if resp.status_code in (401, 403, 429) or resp.status_code >= 500:
            raise refusal(resp, host)
        return media_state(resp.status_code, json_or_none(resp), host)

    def _all_ready(self, pub: Publication, media_ids: list[str]) -> bool:
        return all(self._media_state(pub, m) == "ready" for m in media_ids)

    # --- the status ------------------------------------------------------------------------------------------------
    def _body(self, pub: Publication, media_ids: list[str]) -> dict[str, Any]:
        o = pub.payload.options
        body: dict[str, Any] = {"status": pub.payload.text}
        if media_ids:
            body["media_ids"] = media_ids
        for key in ("visibility", "spoiler_text", "language"):
            if o.get(key):
                body[key] = o[key]
        return body

    def _post_status(self, pub: Publication, media_ids: list[str], ref: str | None) -> PublishOutcome:
        body = self._body(pub, media_ids)
        resp = self._call(
            pub,
            "POST",
            "/api/v1/statuses",
            write=True,
            json=body,
            headers={"Idempotency-Key": idempotency_key(pub.idempotency_token)},
        )
        host = where(pub.account.external_account_id)[1]
        if resp.status_code == 422 and message_of(resp).startswith(NOT_PROCESSED):
            return PublishOutcome.pending(ref or encode_ref(media=media_ids), network_status="processing")
        if resp.status_code != 200:
            err = refusal(resp, host)
            if (
                resp.status_code >= 500
            ):  # the status may exist: reconcile (or replay the key) before a new call
                err.ambiguous = True
            raise err
        status = json_or_none(resp)
        if not isinstance(status, dict) or not status.get("id"):
            raise NetworkError(
                "retriable",
                f"{host} answered the status without its id",
                code="unexpected_answer",
                ambiguous=True,
            )
        warnings = tuple(
            TargetWarning(f"mastodon_{w['code']}", w["message"]) for w in read_back_warnings(body, status)
        )
        return PublishOutcome.published(
            str(status["id"]),
            status.get("url") if isinstance(status.get("url"), str) else None,
            tracking_ref=ref,
            warnings=warnings,
        )

    # --- the engine's calls ----------------------------------------------------------------------------------------
    def publish(self, pub: Publication) -> PublishOutcome:
        try:
            media_ids = self._resumed(pub)
            if media_ids is None:
                refused = self.refused_by_instance(pub)
                if refused is not None:
                    return refused
                alts = list(pub.payload.options.get("alt") or [])
                media_ids = []
                states = []
                for i, m in enumerate(pub.payload.media):
                    media_id, state = self._upload(pub, m, alts[i] if i < len(alts) else "")
                    media_ids.append(media_id)
                    states.append(state)
                    pub.saved(encode_ref(media=media_ids))
                if any(s != "ready" for s in states):
                    time.sleep(INLINE_POLL_S)
                    if not self._all_ready(pub, media_ids):
                        return PublishOutcome.pending(
                            encode_ref(media=media_ids), network_status="processing"
                        )
            elif media_ids and not self._all_ready(pub, media_ids):
                return PublishOutcome.pending(encode_ref(media=media_ids), network_status="processing")
            return self._post_status(pub, media_ids, encode_ref(media=media_ids) if media_ids else None)
        except NetworkError as e:
            return e.outcome()

    def _resumed(self, pub: Publication) -> list[str] | None:
        """The media of an interrupted attempt the instance still has (pub.resume), None to upload them again."""
        if not pub.resume:
            return None
        ids = [str(m) for m in decode_ref(pub.resume).get("media") or []]
        if len(ids) != len(pub.payload.media):
            return None
        for media_id in ids:
            try:
                self._media_state(pub, media_id)
            except NetworkError as e:
                if e.fail_type == "permanent":
                    return None  # gone or failed: upload again
                raise
        return ids

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        """The media followed to ready: pending while one processes, `ready` once all are (complete posts)."""
        media_ids = [str(m) for m in decode_ref(ref).get("media") or []]
        try:
            if not self._all_ready(pub, media_ids):
                return PublishOutcome.pending(ref, network_status="processing")
        except NetworkError as e:
            return e.outcome(tracking_ref=ref)
        return PublishOutcome.ready(ref, network_status="ready")

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        media_ids = [str(m) for m in decode_ref(ref).get("media") or []]
        try:
            return self._post_status(pub, media_ids, ref)
        except NetworkError as e:
            return e.outcome(tracking_ref=ref)

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        """The account's statuses, newest first, back to the attempt's start (minus clock slack), matched by
        reconcile.is_ours, skipping the statuses other targets hold (`pub.held_elsewhere`); an unreadable
        listing is not "absent" (check_failed: ambiguous)."""
        try:
            account_id, _host = where(pub.account.external_account_id)
            spoiler = str(pub.payload.options.get("spoiler_text") or "")
            not_before = pub.not_before(CLOCK_SLACK_S)
            max_id: str | None = None
            for _page in range(MAX_LISTING_PAGES if not_before is not None else PAGES_WITHOUT_WINDOW):
                params: dict[str, Any] = {"limit": PAGE}
                if max_id:
                    params["max_id"] = max_id
                resp = self._call(pub, "GET", f"/api/v1/accounts/{account_id}/statuses", params=params)
                statuses = self._json(pub, resp)
                if not isinstance(statuses, list) or not statuses:
                    return None
                for status in statuses:
                    if not isinstance(status, dict):
                        continue
                    application = status.get("application")
                    if not isinstance(application, dict) or application.get("name") != CLIENT_NAME:
                        continue
                    if (status.get("spoiler_text") or "") != spoiler:
                        continue
                    made = _created_at(status)
                    if str(status.get("id")) in pub.held_elsewhere or (
                        made is not None and pub.made_later(made)
                    ):
                        continue  # another target's status: never this one's, whatever its text
                    source = self._json(
                        pub, self._call(pub, "GET", f"/api/v1/statuses/{status['id']}/source")
                    )
                    if isinstance(source, dict) and is_ours(
                        status,
                        source,
                        text=pub.payload.text,
                        spoiler_text=spoiler,
                        app_name=CLIENT_NAME,
                        attempted_at=pub.attempted_at,
                    ):
                        url = status.get("url")
                        return PublishOutcome.published(
                            str(status["id"]),
                            url if isinstance(url, str) else None,
                            listed_at=_created_at(status),  # is_ours: never None here
                        )
                last = statuses[-1]
                created = _created_at(last) if isinstance(last, dict) else None
                older = not_before is not None and created is not None and created < not_before
                if older or len(statuses) < PAGE:
                    return None
                max_id = str(last["id"])
            return None
        except NetworkError as e:
            return check_failed(LABEL, e)


def make_adapter(ctx: AdapterContext) -> MastodonAdapter:
    """The registry's factory: the instance is the account's (its external id), not a configured host."""
    return MastodonAdapter(ctx.client, ctx.media_loader)
