"""`accounts doctor` (issue 29): what stands between this installation and a first real post, before any browser
step — per network, its configured app; per connected account of the workspace, its authorisation.

Per network (backend/networks/doctor.py):
- the generic checks: the OAuth app's credentials (a network without OAuth: none), and the configured API
  version's lifecycle (`version_findings`, judged on the service clock's day; the version is the network's
  setting that `Lifecycle.setting` names, its default when unset);
- the network's own `check_app(settings)`.

Per connected (not disconnected) account of the workspace:
- its token (what `tokenWarning` says: needs_reauth, token_expired, token_expiring — services/tokens.token_state);
- the network's own `check_account(granted_scopes)`.

A sandbox account is connected to an emulator with no grant of its own: its token and scope checks are skipped
(nothing expires, nothing was granted); its network's app checks still run (they are the same app).

Missing credentials are an error when the network is asked about by name (`accounts doctor NETWORK`, the checks
`accounts connect` runs first) or when the workspace has a live account of it (refreshing its token needs them);
otherwise a warning: an installation that uses only some networks is not broken for the others.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from backend import clock
from backend.config import Settings
from backend.networks import registry
from backend.networks.doctor import Finding, Severity, version_findings
from backend.networks.registry import Network
from backend.services import accounts, networks, tokens
from backend.store.models import Account

ORDER = {"error": 0, "warning": 1}


def _sorted(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, each in the order they were found."""
    return sorted(findings, key=lambda f: ORDER[f.severity])


def configured_version(network: Network, settings: Settings) -> str | None:
    """The API version this configuration uses for `network` (the setting `Lifecycle.setting` names, read
    from the network's own settings; the lifecycle's default when unset); None for a network without one."""
    lifecycle = network.api_lifecycle()
    if lifecycle is None:
        return None
    own = network.settings_of(settings)
    value: Any = None
    if own is not None:
        for name, field in type(own).model_fields.items():
            env = f"SOCIALPUB_{network.name.upper()}_{name.upper()}"
            aliases = getattr(field.validation_alias, "choices", None) or [field.validation_alias]
            if lifecycle.setting == env or lifecycle.setting in aliases:
                value = getattr(own, name)
                break
    return str(value) if value else lifecycle.default


def _credentials(network: Network, settings: Settings, *, required: bool) -> list[Finding]:
    app = network.oauth_app()
    if app is None or network.login or app.instances is not None:
        # no OAuth, a login network (Bluesky), or apps registered per server at connect (Mastodon): none to configure
        return []
    own = network.settings_of(settings)
    if own is not None and own.client_id and own.client_secret:
        return []
    p = network.name.upper()
    missing = [
        f"SOCIALPUB_{p}_{k}"
        for k, v in (("CLIENT_ID", own and own.client_id), ("CLIENT_SECRET", own and own.client_secret))
        if not v
    ]
    return [
        Finding(
            "app_credentials_missing",
            "error" if required else "warning",
            f"{network.label}'s OAuth app is not configured ({' and '.join(missing)} not set): accounts cannot "
            "be connected in the browser, nor their tokens refreshed",
            f"create an app in {network.label}'s developer console and set {' and '.join(missing)} to its "
            f"credentials, or connect with `socialpub accounts connect {network.name} --access-token TOKEN`",
        )
    ]


def app_findings(
    network: Network, settings: Settings, today: date, *, credentials_required: bool = True
) -> list[Finding]:
    """Everything known about `network`'s configured app, errors first."""
    found = _credentials(network, settings, required=credentials_required)
    lifecycle = network.api_lifecycle()
    version = configured_version(network, settings)
    if lifecycle is not None and version is not None:
        found += version_findings(network.label, lifecycle, version, today)
    checks = network.network_checks()
    if checks is not None:
        found += checks.check_app(settings)
    return _sorted(found)


def account_findings(acc: Account, settings: Settings, now: datetime) -> list[Finding]:
    """A connected account's problems, errors first (a sandbox account: none, see the module's docstring)."""
    if acc.kind != "live":
        return []
    found: list[Finding] = []
    state = tokens.token_state(acc, settings, now)
    if state is not None:
        severity: Severity = "warning" if state.code == "token_expiring" else "error"
        found.append(Finding(state.code, severity, state.problem, state.fix))
    network = registry.find(acc.platform)
    checks = network.network_checks() if network is not None else None
    if checks is not None and acc.status == "active":
        found += checks.check_account(acc.granted_scopes.split() if acc.granted_scopes else [])
    return _sorted(found)


def _registered_redirect(network: Network, settings: Settings) -> str | None:
    own = network.settings_of(settings)
    return own.registered_redirect() if own is not None else None


def report(workspace_id: str, settings: Settings, platform: str | None = None) -> dict[str, Any]:
    """GET /v1/accounts/doctor: `{ok, networks: [{platform, redirectUri, findings}], accounts: [{id, platform, name,
    findings}]}`; `ok` is false when any finding is an error. 400 `validation_error` for an unknown platform."""
    networks.require_known(platform, "platform")
    now = clock.now()
    today = now.date()
    accs = [a for a in accounts.list_accounts(workspace_id) if platform is None or a.platform == platform]
    live = {a.platform for a in accs if a.kind == "live"}
    chosen = [registry.get(platform)] if platform else list(registry.networks())
    nets: list[dict[str, Any]] = [
        {
            "platform": n.name,
            "redirectUri": _registered_redirect(n, settings),
            "findings": [
                f.to_dict()
                for f in app_findings(
                    n, settings, today, credentials_required=platform is not None or n.name in live
                )
            ],
        }
        for n in chosen
    ]
    accounts_out: list[dict[str, Any]] = [
        {
            "id": a.id,
            "platform": a.platform,
            "name": a.name,
            "findings": [f.to_dict() for f in account_findings(a, settings, now)],
        }
        for a in accs
    ]
    ok = not any(f["severity"] == "error" for entry in [*nets, *accounts_out] for f in entry["findings"])
    return {"ok": ok, "networks": nets, "accounts": accounts_out}


def app_errors(settings: Settings, platform: str) -> list[Finding]:
    """The errors among `platform`'s app checks: what stops `accounts connect` before any browser step."""
    network = registry.get(platform)
    return [f for f in app_findings(network, settings, clock.now().date()) if f.severity == "error"]
