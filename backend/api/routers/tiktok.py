"""Dedicated TikTok publishing (spec 4.6): photo carousels, videos, status. Scope `publish:tiktok`.

Unlike POST /v1/posts these answer 200 with TikTok's publishId, so the network is called during the
request; the worker then tracks every publication to its terminal status (docs/tiktok.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Path, Query

from backend.api.deps import AuthContext, SettingsDep, require_scope
from backend.api.errors import responses
from backend.schemas.common import ErrorBody
from backend.schemas.tiktok import (
    TikTokPhotoCreate,
    TikTokPhotoOut,
    TikTokStatusOut,
    TikTokVideoCreate,
    TikTokVideoOut,
)
from backend.services import tiktok as svc

router = APIRouter(tags=["tiktok"])
Publisher = Depends(require_scope("publish:tiktok"))


def _publish_responses() -> dict[int | str, dict[str, Any]]:
    out = responses(502)
    out[403] = {
        "model": ErrorBody,
        "description": "insufficient_scope; TikTok caps: spam_risk_too_many_posts "
        "(daily), spam_risk_too_many_pending_shares (drafts)",
    }
    out[429] = {
        "model": ErrorBody,
        "description": "rate_limit_exceeded: this key's budget, or TikTok's ~6 "
        "publications a minute per account (see Retry-After)",
    }
    return out


@router.post(
    "/publish/tiktok/photo",
    operation_id="publishTiktokPhoto",
    response_model=TikTokPhotoOut,
    response_model_exclude_none=True,
    responses=_publish_responses(),
)
def publish_photo(body: TikTokPhotoCreate, settings: SettingsDep, ctx: AuthContext = Publisher) -> Any:
    """A carousel of 1-35 images from the media host. postMode defaults to MEDIA_UPLOAD (a draft in the
    creator's inbox, title and description pre-filled). 400 `media_not_on_media_host` for any other URL."""
    return svc.publish_photo(settings, ctx.workspace_id, body)


@router.post(
    "/publish/tiktok/video",
    operation_id="publishTiktokVideo",
    response_model=TikTokVideoOut,
    response_model_exclude_none=True,
    responses=_publish_responses(),
)
def publish_video(body: TikTokVideoCreate, settings: SettingsDep, ctx: AuthContext = Publisher) -> Any:
    """A video from the media host. The title is published only in DIRECT_POST (echoed in MEDIA_UPLOAD)."""
    return svc.publish_video(settings, ctx.workspace_id, body)


@router.get(
    "/publish/tiktok/status/{publish_id}",
    operation_id="getTiktokStatus",
    response_model=TikTokStatusOut,
    response_model_exclude_none=True,
    responses=responses(404),
)
def publish_status(
    settings: SettingsDep,
    ctx: AuthContext = Publisher,
    publish_id: str = Path(max_length=100, description="publishId of the photo/video response"),
    channel_id: str | None = Query(
        None,
        alias="channelId",
        max_length=100,
        description="the account used at creation (required in effect "
        "when several tiktok accounts are connected)",
    ),
) -> Any:
    """`status`, and `failReason` on FAILED. 403 `token_not_authorized_for_specified_publish_id` when read
    with another account than the one that created it."""
    return svc.read_status(settings, ctx.workspace_id, publish_id, channel_id)
