"""The Threads API's versions: one, `v1.0` (https://developers.facebook.com/documentation/threads/overview, read
2026-11-28: "graph.threads.net/v1.0"; Meta's official Postman collection fbsamples/threads_api @ 44df04d). No end
is announced. SOCIALPUB_THREADS_VERSION chooses it (only v1.0 exists). Imports nothing of the product."""

from __future__ import annotations

from backend.networks.lifecycle import ApiVersion, Lifecycle

SETTING = "SOCIALPUB_THREADS_VERSION"
SOURCE = "https://developers.facebook.com/documentation/threads/overview (read 2026-11-28)"

VERSIONS = (ApiVersion("v1.0", None, None, SOURCE),)
DEFAULT = "v1.0"

LIFECYCLE = Lifecycle(SETTING, VERSIONS, DEFAULT)
