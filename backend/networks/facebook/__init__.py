"""Facebook (a Page) — one network's package (issue 32): its registry entry, cheap to import; the rest is loaded
on first use. Instagram builds on its Graph API client (graph.py) and emulator (emulator_graph.py)."""

from backend.networks.registry import Network
from backend.schemas.networks import NetworkLimits

NETWORK = Network(
    name="facebook",
    label="Facebook",
    badge="FB",
    colour="#1877f2",
    limits=NetworkLimits(max_text=63_206, max_media=10, text_or_media=True),
    adapter="backend.networks.facebook.adapter:make_adapter",
    rules="backend.networks.facebook.rules:RULES",
    app="backend.networks.facebook.app:APP",
    emulator="backend.networks.facebook.emulator:FacebookEmulator",
    settings="backend.networks.facebook.settings:FacebookSettings",
    media_by_url=True,
    sandbox_name="Sandbox Facebook Page",
    docs="backend/networks/facebook/docs.md",
    lifecycle="backend.networks.facebook.lifecycle:LIFECYCLE",
    checks="backend.networks.facebook.checks:CHECKS",
)
