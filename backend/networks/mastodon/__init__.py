"""Mastodon (issue 32 item 3) — one network's package: its registry entry, cheap to import; the rest is loaded on
first use. Any instance: `socialpub accounts connect mastodon --instance HOST` registers socialpub's app on that
instance (kept per instance) and connects an account there by OAuth; the account is kept as `<id>@<host>`, so
the adapter speaks to its instance. Limits are the instance's own (`/api/v2/instance`); the ones below are
upstream Mastodon's, what the front end counts against before it knows an instance's."""

from backend.networks.registry import Network
from backend.schemas.networks import NetworkLimits

NETWORK = Network(
    name="mastodon",
    label="Mastodon",
    badge="MA",
    colour="#6364ff",
    limits=NetworkLimits(
        max_text=500,
        max_text_per_server=True,  # each instance sets its own (max_characters): checked against the account
        text_unit="graphemes",
        min_media=0,
        max_media=4,
        text_or_media=True,
        mixed_media=False,
        extra_media_refused=True,
    ),
    adapter="backend.networks.mastodon.adapter:make_adapter",
    rules="backend.networks.mastodon.rules:RULES",
    app="backend.networks.mastodon.app:APP",
    emulator="backend.networks.mastodon.emulator:MastodonEmulator",
    options="backend.networks.mastodon.options:MastodonOptions",
    checks="backend.networks.mastodon.checks:CHECKS",
    target_check="backend.networks.mastodon.rules:target_problems",
    listing_delay_s=0.0,  # the account's statuses are read from the instance's database: read-after-write
    docs="backend/networks/mastodon/docs.md",
    user_hosts=True,  # an instance typed at connect / a PDS named by a DID document: the address rule applies
)
