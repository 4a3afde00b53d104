"""LinkedIn — one network's package (issue 32): its registry entry, cheap to import; the rest is loaded
on first use."""

from backend.networks.registry import Network
from backend.schemas.networks import NetworkLimits

NETWORK = Network(
    name="linkedin",
    label="LinkedIn",
    badge="LI",
    colour="#0a66c2",
    limits=NetworkLimits(max_text=3000, text_unit="escaped", text_or_media=True),
    adapter="backend.networks.linkedin.adapter:make_adapter",
    rules="backend.networks.linkedin.rules:RULES",
    app="backend.networks.linkedin.app:APP",
    emulator="backend.networks.linkedin.emulator:LinkedInEmulator",
    settings="backend.networks.linkedin.settings:LinkedInSettings",
    docs="backend/networks/linkedin/docs.md",
    lifecycle="backend.networks.linkedin.lifecycle:LIFECYCLE",
    checks="backend.networks.linkedin.checks:CHECKS",
)
