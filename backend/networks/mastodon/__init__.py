"""Mastodon (issue 32 item 3), any instance — work in progress, NOT registered yet (no entry point in
pyproject.toml): its pure parts are here with their tests (the status length as the instance counts it, the
instance's limits, the API's refusals, the idempotency key); the adapter, the per-instance app store, the OAuth
connect and the emulator are still to build (docs.md, "State")."""
