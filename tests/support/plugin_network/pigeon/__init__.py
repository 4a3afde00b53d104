"""Pigeon post: a carrier-pigeon network (a test plugin). Its registry entry, cheap to import."""

from backend.networks.registry import Network
from backend.schemas.networks import NetworkLimits

NETWORK = Network(
    name="pigeon",
    label="Pigeon Post",
    badge="PG",
    colour="#8a8a8a",
    limits=NetworkLimits(max_text=280, max_media=4, text_or_media=True),
    adapter="pigeon.adapter:make_adapter",
    rules="pigeon.rules:RULES",
    emulator="pigeon.emulator:PigeonEmulator",
    settings="pigeon.settings:PigeonSettings",
    options="pigeon.options:PigeonOptions",
    docs="tests/support/plugin_network/README.md",
    lifecycle="pigeon.lifecycle:LIFECYCLE",
    checks="pigeon.checks:CHECKS",
)
