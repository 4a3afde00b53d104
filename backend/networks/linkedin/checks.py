"""LinkedIn's `accounts doctor` checks (issue 29; backend/networks/doctor.py): its configured app — the redirect
URL LinkedIn must have registered, organisation posting and the product it needs — and a connected account's
grant against what posting and reconciliation need. The generic checks (credentials, the API version's
lifecycle: lifecycle.py) are the doctor service's."""

from __future__ import annotations

from collections.abc import Sequence

from backend.config import Settings
from backend.networks.doctor import Finding, NetworkChecks
from backend.networks.linkedin.settings import ORGANIZATION_SCOPES, LinkedInSettings

CMA = "the Community Management API"


def check_app(settings: Settings) -> list[Finding]:
    own = settings.network_settings(LinkedInSettings)
    found: list[Finding] = []
    if own.redirect_port is None:
        found.append(
            Finding(
                "linkedin_redirect_url",
                "warning",
                "LinkedIn sends the browser back only to a redirect URL registered on the app, port included, and "
                "a new app has none: the CLI's loopback listener is refused until its URL is registered",
                "choose a port (e.g. 53682), add http://127.0.0.1:53682/callback to the app's 'Authorized "
                "redirect URLs' (Auth tab of the developer portal) and set SOCIALPUB_LINKEDIN_REDIRECT_PORT=53682: "
                "`socialpub accounts connect linkedin` then listens there",
            )
        )
    if own.organizations:
        found.append(
            Finding(
                "linkedin_organizations_need_cma",
                "warning",
                f"organisation posting (SOCIALPUB_LINKEDIN_ORGANIZATIONS) asks {' '.join(ORGANIZATION_SCOPES)}, "
                f"which LinkedIn grants only to apps approved for {CMA} (registered legal organisations, "
                "commercial use): any other app's consent is refused (unauthorized_scope_error)",
                f"make sure the app holds {CMA} (Products tab; an access request LinkedIn reviews), or unset "
                "SOCIALPUB_LINKEDIN_ORGANIZATIONS to post as the member",
            )
        )
    return found


def check_account(granted_scopes: Sequence[str]) -> list[Finding]:
    granted = set(granted_scopes)
    if not granted:  # the network did not say (a token given by hand)
        return []
    found: list[Finding] = []
    if not granted & {"w_member_social", "w_organization_social"}:
        found.append(
            Finding(
                "linkedin_cannot_post",
                "error",
                "the account's grant holds neither w_member_social (a member's posts) nor w_organization_social "
                "(an organisation's): LinkedIn refuses its posts",
                "add 'Share on LinkedIn' on the app's Products tab, then reconnect the account "
                "(`socialpub accounts connect linkedin`)",
            )
        )
    if "w_organization_social" in granted and "r_organization_social" not in granted:
        found.append(
            Finding(
                "linkedin_reconnect_for_reconciliation",
                "warning",
                "the account was connected without r_organization_social: socialpub cannot read the "
                "organisation's posts back to check a publication whose outcome was lost",
                "reconnect the account (`socialpub accounts connect linkedin` with "
                "SOCIALPUB_LINKEDIN_ORGANIZATIONS=1 asks it)",
            )
        )
    elif not granted & {"r_member_social", "r_organization_social"}:
        found.append(
            Finding(
                "linkedin_reconciliation_unavailable",
                "warning",
                "LinkedIn lets only approved partners read a member's posts back (r_member_social): a "
                "publication whose outcome was lost (a crash, a timeout) cannot be checked, and its target "
                "fails saying to check the account — it is never posted twice",
                "nothing to set: when a LinkedIn target says it may have been published, look at the "
                "account's activity on LinkedIn before retrying it",
            )
        )
    return found


CHECKS = NetworkChecks(check_app, check_account)
