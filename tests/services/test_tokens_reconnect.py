"""The command a user is told to run to reconnect an account names what connecting it needs: a login network's
handle, a network of many servers the account's server."""

from __future__ import annotations

from backend.services.tokens import reconnect_command
from backend.store.models import Account


def test_the_reconnect_command_names_the_handle_or_the_instance() -> None:
    mastodon = Account(platform="mastodon", external_id="109@social.example", username="jo")
    assert reconnect_command(mastodon) == "socialpub accounts connect mastodon --instance social.example"
    bluesky = Account(platform="bluesky", external_id="did:plc:abc", username="jo.bsky.social")
    assert reconnect_command(bluesky) == "socialpub accounts connect bluesky --handle jo.bsky.social"
    facebook = Account(platform="facebook", external_id="1234", username="")
    assert reconnect_command(facebook) == "socialpub accounts connect facebook"
