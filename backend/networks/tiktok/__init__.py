"""TikTok — one network's package (issue 32): its registry entry, cheap to import; the rest is loaded
on first use. Its dedicated endpoints (/v1/publish/tiktok/*, spec 4.6) are docs/tiktok.md's."""

from backend.networks.registry import Network
from backend.schemas.networks import NetworkLimits

NETWORK = Network(
    name="tiktok",
    label="TikTok",
    badge="TT",
    colour="#ff0050",
    limits=NetworkLimits(
        max_text=2200, text_unit="utf16", min_media=1, media_required=True, photo_title_max=90
    ),
    adapter="backend.networks.tiktok.adapter:make_adapter",
    rules="backend.networks.tiktok.rules:RULES",
    app="backend.networks.tiktok.app:APP",
    emulator="backend.networks.tiktok.emulator:TikTokEmulator",
    settings="backend.networks.tiktok.settings:TikTokSettings",
    options="backend.networks.tiktok.options:TikTokOptions",
    # TikTok lists a direct post only once processed (< 30 s per 512 MB) and moderated (usually < 1 min);
    # "sometimes" takes hours: a post held that long is not covered (SOCIALPUB_LISTING_DELAY_S raises it)
    listing_delay_s=600.0,
    track_deadline_s=2 * 3600.0,  # moderation can take long; drafts arrive in 10-15 s
    media_by_url=True,
    # `init --sandbox` connects a private TikTok account: a new (unaudited) app may direct-post to it, as SELF_ONLY
    # (content-sharing-guidelines), so a first direct post goes through, with the tiktok_self_only warning
    sandbox_private=True,
    docs="backend/networks/tiktok/docs.md",
    checks="backend.networks.tiktok.checks:CHECKS",
    # a direct post's privacy, against the account's creator_info, refused at creation (issue 29)
    target_check="backend.networks.tiktok.adapter:target_problems",
    # what creator_info says the creator may choose now: GET /v1/accounts/{id}/choices (issue 29)
    choices="backend.networks.tiktok.adapter:account_choices",
)
