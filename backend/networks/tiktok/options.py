"""`options.tiktok` of POST /v1/posts (spec 4.4): the post mode, privacy and interaction settings."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from backend.schemas.options import WireModel

TikTokPostMode = Literal["DIRECT_POST", "MEDIA_UPLOAD"]
TikTokPrivacyLevel = Literal[
    "PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"
]
# TikTok's consent sentences (content-sharing-guidelines, UX point 4: shown before the creator posts, word for word)
CONSENT = "By posting, you agree to TikTok's Music Usage Confirmation."
CONSENT_BRANDED = "By posting, you agree to TikTok's Branded Content Policy and Music Usage Confirmation."
DISCLOSE_REQUIRES_ONE = "You need to indicate if your content promotes yourself, a third party, or both."
TIKTOK_PRIVACY_LEVELS: tuple[str, ...] = (
    "PUBLIC_TO_EVERYONE",
    "MUTUAL_FOLLOW_FRIENDS",
    "FOLLOWER_OF_CREATOR",
    "SELF_ONLY",
)


class TikTokOptions(WireModel):
    """`options.tiktok`. In MEDIA_UPLOAD the privacy and interaction settings are accepted and ignored. In
    DIRECT_POST the interactions stay off (disable_* true) unless set to false."""

    # recipes may write `privacy` for privacyLevel (x-shorthands, as YouTube's `privacy`). x-groups: boxes a front
    # end shows under one toggle of their own, off by default (TikTok's "Disclose video content"), one of which must
    # be ticked once it is on (requireOne)
    model_config = ConfigDict(
        title="TikTokOptions",
        json_schema_extra={
            "x-shorthands": {"privacy": "privacyLevel"},
            "x-groups": {
                "disclose": {"title": "Disclose video content", "requireOne": DISCLOSE_REQUIRES_ONE}
            },
        },
    )

    post_mode: TikTokPostMode = Field(
        default="DIRECT_POST",
        title="Mode",
        description="MEDIA_UPLOAD puts the content in the creator's drafts",
        json_schema_extra={
            "x-labels": {
                "DIRECT_POST": "Publish directly (DIRECT_POST)",
                "MEDIA_UPLOAD": "Draft to the creator's inbox (MEDIA_UPLOAD)",
            }
        },
    )
    privacy_level: TikTokPrivacyLevel | None = Field(
        default=None,
        title="Who can see it (required)",
        description="DIRECT_POST: required, the creator's choice among the levels the account's creator_info "
        "offers (nothing pre-selected: TikTok's rule); an unaudited TikTok app may post only SELF_ONLY to a "
        "private account",
    )
    # DIRECT_POST: off unless the creator turns it on (TikTok's UX rules: none on by default; off where creator_info
    # says the creator disabled it). `x-allow`: a front end shows an unticked "Allow …" box, ticked sends false
    disable_comment: bool | None = Field(
        default=None,
        title="No comments",
        description="false allows comments; unset or true: off",
        json_schema_extra={"x-allow": "Allow comments"},
    )
    disable_duet: bool | None = Field(
        default=None,
        title="No duets",
        description="false allows duets; unset or true: off",
        json_schema_extra={"x-allow": "Allow Duet"},
    )
    disable_stitch: bool | None = Field(
        default=None,
        title="No stitches",
        description="false allows stitches; unset or true: off",
        json_schema_extra={"x-allow": "Allow Stitch"},
    )
    auto_add_music: bool | None = Field(default=None, title="Auto music")
    # Commercial content disclosure (content-sharing-guidelines, point 3; post_info of the direct-post and photo
    # APIs): off unless the creator says so. x-note: what TikTok labels the post with (the later one ticked wins:
    # "Paid partnership" with both); x-consent: the consent sentence once ticked; x-excludes: values of other
    # options it cannot go with (branded content is never SELF_ONLY)
    brand_organic_toggle: bool | None = Field(
        default=None,
        title="Your brand",
        description="DIRECT_POST: the post promotes the creator's own business (TikTok labels it "
        "'Promotional content')",
        json_schema_extra={
            "x-group": "disclose",
            "x-note": "Your photo/video will be labeled as 'Promotional content'",
        },
    )
    brand_content_toggle: bool | None = Field(
        default=None,
        title="Branded content",
        description="DIRECT_POST: the post promotes a third party in exchange for something of value (TikTok "
        "labels it 'Paid partnership'); never with privacyLevel SELF_ONLY",
        json_schema_extra={
            "x-group": "disclose",
            "x-note": "Your photo/video will be labeled as 'Paid partnership'",
            "x-consent": CONSENT_BRANDED,
            "x-excludes": {"privacyLevel": ["SELF_ONLY"]},
        },
    )
