"""Pigeon post's own doctor checks (a test plugin): its app must hold the `carry` product to publish (granting
`coo.write`), and reconciliation reads the loft with `coo.read`."""

from collections.abc import Sequence

from backend.config import Settings
from backend.networks.doctor import Finding, NetworkChecks
from backend.networks.registry import get

PUBLISH = "coo.write"
LIST = "coo.read"


def check_app(settings: Settings) -> list[Finding]:
    own = get("pigeon").settings_of(settings)
    products = set((getattr(own, "products", "") or "").split(","))
    found: list[Finding] = []
    if "carry" not in products:
        found.append(
            Finding(
                "pigeon_product_missing",
                "error",
                f"the pigeon app does not hold the carry product: the loft refuses {PUBLISH} at consent",
                "add the carry product to the app in the loft's console and set SOCIALPUB_PIGEON_PRODUCTS=carry",
            )
        )
    if not getattr(own, "audited", False):
        found.append(
            Finding(
                "pigeon_unaudited",
                "warning",
                "the pigeon app is not audited: its messages reach the loft's members only",
                "ask the loft for an audit, then set SOCIALPUB_PIGEON_AUDITED=true",
            )
        )
    return found


def check_account(granted: Sequence[str]) -> list[Finding]:
    if not granted:  # the loft did not say: nothing to check
        return []
    found: list[Finding] = []
    if PUBLISH not in granted:
        found.append(
            Finding(
                "scope_missing_publish",
                "error",
                f"the account did not grant {PUBLISH}: the loft refuses its posts",
                "reconnect with socialpub accounts connect pigeon and allow sending messages",
            )
        )
    if LIST not in granted:
        found.append(
            Finding(
                "scope_missing_list",
                "error",
                f"the account did not grant {LIST}: a post whose answer was lost cannot be looked up",
                "reconnect with socialpub accounts connect pigeon and allow reading the loft",
            )
        )
    return found


CHECKS = NetworkChecks(check_app, check_account)
