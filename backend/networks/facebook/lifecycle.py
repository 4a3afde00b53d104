"""Meta's Graph API versions (Facebook Pages and Instagram with Facebook Login share them): one lifecycle.

Source: the Graph API changelog's version table (https://developers.facebook.com/docs/graph-api/changelog/versions,
read 2026-11-28: the page "Updated: Oct 29, 2026" and its de_DE copy with the version labels). A version is usable
until two years after the next one's release (https://developers.facebook.com/docs/graph-api/guides/versioning,
read 2026-11-28); past that day Meta serves its calls with the next oldest usable version, silently (the only
signal is the `facebook-api-version` response header): socialpub never relies on that — `accounts doctor` warns
30 days before the configured version's end and reports a version past it as a configuration error.

SOCIALPUB_GRAPH_API_VERSION chooses the version (default: the newest the code is tested against). Imports nothing
of the product: the emulators read it too.
"""

from __future__ import annotations

from datetime import date

from backend.networks.lifecycle import ApiVersion, Lifecycle

SETTING = "SOCIALPUB_GRAPH_API_VERSION"
CHANGELOG = "https://developers.facebook.com/docs/graph-api/changelog/versions (read 2026-11-28)"

VERSIONS = (
    ApiVersion("v20.0", date(2024, 5, 21), date(2026, 9, 24), CHANGELOG),
    ApiVersion("v21.0", date(2024, 10, 2), date(2027, 1, 21), CHANGELOG),
    ApiVersion("v22.0", date(2025, 1, 21), date(2027, 5, 20), CHANGELOG),
    ApiVersion("v23.0", date(2025, 5, 29), date(2027, 10, 8), CHANGELOG),
    ApiVersion("v24.0", date(2025, 10, 8), date(2028, 2, 18), CHANGELOG),
    ApiVersion("v25.0", date(2026, 2, 18), date(2028, 7, 29), CHANGELOG),
    # the changelog says "TBD" for the newest two: no end announced yet
    ApiVersion("v26.0", date(2026, 7, 29), None, CHANGELOG),
    # the 2026-11-04 row's label is v27.0 by sequence and by the Video API guide's samples (graph-video …/v27.0)
    ApiVersion("v27.0", date(2026, 11, 4), None, CHANGELOG),
)

# the newest version the adapters and their emulators are tested against (v27.0's changelog is not read yet)
DEFAULT = "v26.0"

LIFECYCLE = Lifecycle(SETTING, VERSIONS, DEFAULT)
