"""The sandbox's control endpoints beside a network's OAuth side (split from oauth.py, issue 31), not real
endpoints of any network: `/_sandbox/oauth` (the OAuth switches), `/_sandbox/grants` (the consents, and revoking
one as the user does in the network's settings) and `/_sandbox/errors` (the error switches).
"""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks.sandbox import errors  # the error switches (a switch per NETWORKS.md code)
from backend.networks.sandbox.core import Emulator, Request, json_response
from backend.networks.sandbox.credentials import grants
from backend.networks.sandbox.oauth_switches import configure_oauth, oauth_settings
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant
from backend.networks.sandbox.token_auth import revoke_grant


def route_controls(emulator: Emulator) -> None:
    """Add the sandbox's control endpoints (`/_sandbox/oauth`, `/_sandbox/grants`, `/_sandbox/errors`) to an
    emulator with an OAuth side."""
    emulator.route(
        "GET", r"/_sandbox/oauth", lambda request: json_response(200, oauth_settings(emulator.platform))
    )
    emulator.route("POST", r"/_sandbox/oauth", lambda request: _control(emulator.platform, request))
    emulator.route(
        "GET",
        r"/_sandbox/grants",
        lambda request: json_response(200, {"grants": [_grant_view(g) for g in grants(emulator.platform)]}),
    )
    emulator.route(
        "POST",
        r"/_sandbox/grants/(?P<grant_id>[^/]+)/revoke",
        lambda request, grant_id: _revoke_control(emulator.platform, grant_id),
    )

    for method in ("GET", "POST"):
        emulator.route(
            method,
            r"/_sandbox/errors",
            lambda request: errors.control(emulator.platform, request.method, request.json),
        )


def _grant_view(g: SandboxGrant) -> dict[str, Any]:
    """A consent as the user sees it in the network's "connected apps" settings."""
    return {
        "id": g.id,
        "clientId": g.client_id,
        "subject": g.subject,
        "scopes": list(g.scopes or []),
        "accounts": [
            a.name
            for a in SandboxAccount.select(SandboxAccount.name).where(
                SandboxAccount.id.in_(list(g.account_ids or []))
            )
        ],
        "state": g.state,
        "createdAt": g.created_at.isoformat(),
    }


def _revoke_control(platform: str, grant_id: str) -> httpx.Response:
    """POST /_sandbox/grants/{id}/revoke: the user removes the app in the network's settings (not a real
    endpoint): every token of that consent is then refused."""
    g = SandboxGrant.get_or_none((SandboxGrant.id == grant_id) & (SandboxGrant.platform == platform))
    if g is None:
        return json_response(
            404, {"error": "not_found", "error_description": f"no {platform} grant {grant_id}"}
        )
    revoke_grant(grant_id)
    return json_response(200, _grant_view(SandboxGrant.get_by_id(grant_id)))


def _control(platform: str, request: Request) -> httpx.Response:
    """POST /_sandbox/oauth {switch: value, …}: set switches of a served emulator (not a real endpoint)."""
    body = request.json if isinstance(request.json, dict) else {}
    try:
        return json_response(200, configure_oauth(platform, **body))
    except (TypeError, ValueError) as exc:
        return json_response(400, {"error": "invalid_request", "error_description": str(exc)})
