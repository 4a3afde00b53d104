"""Bluesky (AT Protocol) — one network's package (issue 32 item 2): its registry entry, cheap to import; the rest
is loaded on first use. An account is a DID on a PDS (its personal data server, named by its DID document),
connected with a handle and an app password (`socialpub accounts connect bluesky --handle H [--pds URL]`)."""

from backend.networks.registry import Network
from backend.schemas.networks import NetworkLimits

NETWORK = Network(
    name="bluesky",
    label="Bluesky",
    badge="BS",
    colour="#1185fe",
    limits=NetworkLimits(
        max_text=300,
        text_unit="graphemes",
        min_media=0,
        max_media=4,
        text_or_media=True,
        mixed_media=False,
        extra_media_refused=True,
        description_max_bytes=3000,
    ),
    adapter="backend.networks.bluesky.adapter:make_adapter",
    rules="backend.networks.bluesky.rules:RULES",
    app="backend.networks.bluesky.app:APP",
    emulator="backend.networks.bluesky.emulator:BlueskyEmulator",
    settings="backend.networks.bluesky.settings:BlueskySettings",
    options="backend.networks.bluesky.options:BlueskyOptions",
    checks="backend.networks.bluesky.checks:CHECKS",
    login="backend.networks.bluesky.session:login",
    target_check="backend.networks.bluesky.rules:target_problems",  # a video within the PDS's blob limit
    listing_delay_s=0.0,  # getRecord on the PDS: read-after-write, absence is conclusive at once
    docs="backend/networks/bluesky/docs.md",
    user_hosts=True,  # a PDS named by a DID document, a handle's own server: the address rule applies
)
