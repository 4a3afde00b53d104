"""Media followed to ready (docs.joinmastodon.org/methods/media/ and /entities/MediaAttachment/, read 2026-11-28):
`POST /api/v2/media` answers 200 with the attachment processed, or 202 with `url: null` while it is processed
asynchronously; `GET /api/v1/media/:id` then answers 206 while processing, 200 once ready, 422 when the instance
could not process it (permanent), 404 when it is gone. A status may attach only ready media (else 422 "Cannot
attach files that have not finished processing"), so the adapter polls `media_state` until READY."""

from __future__ import annotations

from typing import Any, Literal

from backend.networks.base import NetworkError

MediaState = Literal["ready", "processing"]


def media_state(status: int, body: Any, host: str = "the instance") -> MediaState:
    """The state of one uploaded media from the answer of POST /api/v2/media or GET /api/v1/media/:id; a failure
    is a NetworkError (422: the instance could not process it, permanent; 404: gone, permanent)."""
    if status == 202 or status == 206:
        return "processing"
    if status == 200:
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            raise NetworkError(
                "retriable", f"{host} answered the media without its id", code="unexpected_answer"
            )
        return "ready" if body.get("url") else "processing"
    if status == 422:
        said = body.get("error") if isinstance(body, dict) else None
        detail = f' ("{said}")' if isinstance(said, str) else ""
        raise NetworkError(
            "permanent",
            f"{host} could not process the media{detail}: convert it (see the instance's supported types)",
            code="media_processing_failed",
            http_status=status,
        )
    if status == 404:
        raise NetworkError(
            "permanent", f"{host} no longer has the uploaded media", code="media_gone", http_status=status
        )
    raise NetworkError(
        "retriable" if status >= 500 or status == 429 else "permanent",
        f"{host} answered {status} about the media",
        code=f"http_{status}",
        http_status=status,
    )


def read_back_warnings(asked: dict[str, Any], status: dict[str, Any]) -> list[dict[str, str]]:
    """What the instance changed of what was asked, as target warnings (`[{code, message}]`): a public status
    made unlisted (a silenced account: PostStatusService), a language it did not keep. The post is published;
    the user must know."""
    out: list[dict[str, str]] = []
    want_vis, got_vis = asked.get("visibility"), status.get("visibility")
    if want_vis and got_vis and want_vis != got_vis:
        out.append(
            {
                "code": "visibility_changed",
                "message": f"the instance published the status as {got_vis}, not {want_vis} "
                "(a limited account's public statuses become unlisted)",
            }
        )
    want_lang, got_lang = asked.get("language"), status.get("language")
    if want_lang and want_lang != got_lang:
        out.append(
            {
                "code": "language_changed",
                "message": f"the instance set the status's language to {got_lang or 'none'}, not {want_lang}",
            }
        )
    return out
