"""Threads (Meta's Threads API) — one network's package (issue 32): its registry entry, cheap to import; the rest is
loaded on first use. It builds on Facebook's package (the Graph API client, its error classification and its
emulator), with its own OAuth app (threads.com / graph.threads.net) and its own API version (v1.0)."""

from backend.networks.registry import Network
from backend.schemas.networks import NetworkLimits

NETWORK = Network(
    name="threads",
    label="Threads",
    badge="TH",
    colour="#101010",
    # 500 characters, an emoji counted as its UTF-8 bytes (rules.py text_length); a carousel of 2-20 items
    limits=NetworkLimits(max_text=500, text_unit="emoji_utf8", max_media=20, text_or_media=True),
    adapter="backend.networks.threads.adapter:make_adapter",
    rules="backend.networks.threads.rules:RULES",
    app="backend.networks.threads.app:APP",
    emulator="backend.networks.threads.emulator:ThreadsEmulator",
    settings="backend.networks.threads.settings:ThreadsSettings",
    media_by_url=True,  # Threads downloads every image and video from its URL: no byte upload exists
    builds_on=("facebook",),
    docs="backend/networks/threads/docs.md",
    lifecycle="backend.networks.threads.lifecycle:LIFECYCLE",
    checks="backend.networks.threads.checks:CHECKS",
)
