"""Instagram (a professional account) — one network's package (issue 32): its registry entry, cheap to import; the rest is loaded
on first use. It builds on Facebook's package: the Graph API client and emulator, Facebook Login."""

from backend.networks.registry import Network
from backend.schemas.networks import NetworkLimits

NETWORK = Network(
    name="instagram",
    label="Instagram",
    badge="IG",
    colour="#e1306c",
    limits=NetworkLimits(max_text=2200, min_media=1, media_required=True),
    adapter="backend.networks.instagram.adapter:make_adapter",
    rules="backend.networks.instagram.rules:RULES",
    app="backend.networks.instagram.app:APP",
    emulator="backend.networks.instagram.emulator:InstagramEmulator",
    settings="backend.networks.instagram.settings:InstagramSettings",
    media_by_url=True,  # images always by URL; videos by bytes unless SOCIALPUB_MEDIA_BY_URL names it
    builds_on=("facebook",),
    docs="backend/networks/instagram/docs.md",
    lifecycle="backend.networks.facebook.lifecycle:LIFECYCLE",
    checks="backend.networks.instagram.checks:CHECKS",
)
