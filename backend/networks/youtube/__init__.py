"""YouTube (Shorts) — one network's package (issue 32): its registry entry, cheap to import; the rest is loaded
on first use."""

from backend.networks.registry import Network
from backend.schemas.networks import NetworkLimits

NETWORK = Network(
    name="youtube",
    label="YouTube",
    badge="YT",
    colour="#ff0000",
    limits=NetworkLimits(
        max_text=63_206,
        min_media=1,
        max_media=1,
        video_required=True,
        title_max=100,
        description_max_bytes=5000,
        replaced_characters={"<": "‹", ">": "›"},
    ),
    adapter="backend.networks.youtube.adapter:make_adapter",
    rules="backend.networks.youtube.rules:RULES",
    app="backend.networks.youtube.app:APP",
    emulator="backend.networks.youtube.emulator:YouTubeEmulator",
    settings="backend.networks.youtube.settings:YouTubeSettings",
    options="backend.networks.youtube.options:YouTubeOptions",
    checks="backend.networks.youtube.checks:CHECKS",
    track_deadline_s=3600.0,
    docs="backend/networks/youtube/docs.md",
)
