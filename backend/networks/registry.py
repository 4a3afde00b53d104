"""The registry of networks: one `Network` per network, found through the entry-point group `socialpub.networks`.

A network is a package (backend/networks/<name>/ for the built-ins, any distribution for a plugin) whose entry
point loads its `Network`: name, label, badge, colour, the limits the front end shows, and references
("module:attr" strings, loaded on first use) to its adapter factory, rules, OAuth app, emulator, settings and
options model. Declaring a network is cheap: listing the networks imports no adapter, emulator or HTTP library,
so the front end's start-up does not pay for them.

Built-in networks are registered in pyproject.toml exactly as a third-party package registers one:

    [project.entry-points."socialpub.networks"]
    tiktok = "backend.networks.tiktok:NETWORK"

Order: the built-ins (the `socialpub` distribution's entry points) in name order, then the plugins in name order.
An entry point whose name is already taken, that cannot load, or that gives something else than a `Network` of
its own name is left out and logged: one broken plugin does not take the service down. After pyproject.toml's
entry points change, reinstall (`make setup`) for them to be seen.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import re
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from backend.schemas.networks import NetworkLimits

if TYPE_CHECKING:
    from pydantic import BaseModel

    from backend.config import Settings
    from backend.networks.base import NetworkAdapter
    from backend.networks.doctor import NetworkChecks
    from backend.networks.factory import AdapterContext
    from backend.networks.lifecycle import Lifecycle
    from backend.networks.oauth_types import OAuthApp
    from backend.networks.rules.common import NetworkRules
    from backend.networks.settings import NetworkSettings

log = logging.getLogger("socialpub.networks")

ENTRY_POINT_GROUP = "socialpub.networks"
BUILTIN_DISTRIBUTION = "socialpub"
# a network's name is a target of POST /v1/posts, a column value, a CLI word and a field of `options`
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{1,19}$")


class UnknownNetwork(ValueError):
    """No registered network has this name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown network {name!r}: one of {', '.join(names())}")
        self.name = name


_LOADED: dict[str, Any] = {}
_LOAD_GUARD = threading.RLock()  # a module being imported may load another reference


def load_ref(ref: str) -> Any:
    """The object a "module:attr" (or "module:attr.attr") reference names, imported once."""
    found = _LOADED.get(ref)
    if found is None:
        module, _sep, attr = ref.partition(":")
        if not module or not attr:
            raise ValueError(f"{ref!r} is not a 'module:attr' reference")
        with _LOAD_GUARD:
            found = importlib.import_module(module)
            for part in attr.split("."):
                found = getattr(found, part)
            _LOADED[ref] = found
    return found


@dataclass(frozen=True)
class Network:
    """One network, as its package declares it (its `__init__.py`, with no heavy import).

    adapter: "module:factory", the factory called with an AdapterContext (its HTTP client, hosts, own settings,
    media loader) returns the NetworkAdapter. rules: "module:attr" of its NetworkRules. app: its OAuthApp
    (endpoints, discovery, health check, how its API refuses), None when it has no OAuth. emulator: its sandbox
    emulator class (backend.networks.sandbox.core.Emulator), None when it has none. settings: its settings
    model (a NetworkSettings: SOCIALPUB_<NAME>_…), None when it has none. options: the pydantic model of
    `options.<name>` in POST /v1/posts, None when it takes none.
    listing_delay_s: how long after accepting a publication the live network's listing may still miss it
    (find_existing's "absent" is conclusive only that long after the call was over; SOCIALPUB_LISTING_DELAY_S
    overrides it). track_deadline_s: how long an accepted publication may take to be confirmed before the target
    fails `retriable`. media_by_url: SOCIALPUB_MEDIA_BY_URL may name it (it can fetch media from their URL
    instead of receiving the bytes). builds_on: the networks whose packages it imports (Instagram: Facebook's
    Graph API). docs: its documentation page, relative to the repository. login: how an account connects with a login (an
    identifier and a password) instead of OAuth, None for an OAuth network.
    """

    name: str
    label: str
    badge: str
    colour: str
    limits: NetworkLimits
    adapter: str
    rules: str
    app: str | None = None
    emulator: str | None = None
    settings: str | None = None
    options: str | None = None
    listing_delay_s: float = 0.0
    track_deadline_s: float = 15 * 60.0
    media_by_url: bool = False
    sandbox_name: str = ""
    # `socialpub init --sandbox` connects a private account at this network (a network with private accounts, whose
    # new app may post only to one: TikTok); the emulator's own default stays a public account
    sandbox_private: bool = False
    builds_on: tuple[str, ...] = ()
    docs: str = ""
    lifecycle: str | None = None
    checks: str | None = None
    # "module:fn" of a network connected with a login instead of OAuth (Bluesky: a handle and an app password):
    # fn(settings, client, identifier, password, service) -> the Candidate to store (backend/networks/oauth.py)
    login: str | None = None
    # "module:fn" of a check POST /v1/posts (and a change of a post) runs per target against the account itself,
    # before accepting the post: fn(adapter, access_token, draft) -> [(code, message, extra)], draft a
    # base.TargetDraft (the account's external id, the post's content, media and the network's own options, the
    # cached limits of the account's server). It may call the network, boundedly (TikTok reads creator_info: the
    # privacy the creator may choose); a network error it raises does not refuse the post: the publication checks
    # again (services/posts/checks.py check_against_accounts). Mastodon applies the account's instance's limits.
    target_check: str | None = None
    # "module:fn" of what the network says an account's creator may choose now (backend/networks/choices.py):
    # fn(adapter, access_token) -> AccountChoices; it calls the network (GET /v1/accounts/{id}/choices). None: none
    choices: str | None = None
    # its live hosts come from users (a Mastodon instance, a Bluesky PDS named by a DID document): every live call
    # goes through the address rule (backend/outbound/guarded.py), the hosts of its settings trusted as configured
    user_hosts: bool = False
    builtin: bool = False  # set by the registry: a `socialpub` entry point

    # --- the lazily loaded parts ---------------------------------------------------------------------------
    def make_adapter(self, ctx: AdapterContext) -> NetworkAdapter:
        adapter: NetworkAdapter = load_ref(self.adapter)(ctx)
        return adapter

    def network_rules(self) -> NetworkRules:
        rules: NetworkRules = load_ref(self.rules)
        return rules

    def oauth_app(self) -> OAuthApp | None:
        return load_ref(self.app) if self.app else None

    def emulator_class(self) -> Any:
        if not self.emulator:
            raise ValueError(f"{self.name} has no sandbox emulator")
        return load_ref(self.emulator)

    def settings_model(self) -> type[NetworkSettings] | None:
        return load_ref(self.settings) if self.settings else None

    def settings_of(self, settings: Settings) -> NetworkSettings | None:
        """The network's own settings, read once per Settings object (Settings.network_settings)."""
        model = self.settings_model()
        return settings.network_settings(model) if model is not None else None

    def options_model(self) -> type[BaseModel] | None:
        return load_ref(self.options) if self.options else None

    def api_lifecycle(self) -> Lifecycle | None:
        return load_ref(self.lifecycle) if self.lifecycle else None

    def network_checks(self) -> NetworkChecks | None:
        return load_ref(self.checks) if self.checks else None

    def login_fn(self) -> Any:
        return load_ref(self.login) if self.login else None

    def target_checker(self) -> Any:
        return load_ref(self.target_check) if self.target_check else None

    def choices_fn(self) -> Any:
        return load_ref(self.choices) if self.choices else None

    @property
    def sandbox_account_name(self) -> str:
        """The name `socialpub init --sandbox` gives this network's sandbox account."""
        return self.sandbox_name or f"Sandbox {self.label}"


_NETWORKS: tuple[Network, ...] | None = None
_BY_NAME: dict[str, Network] = {}
_GUARD = threading.Lock()


def _is_builtin(ep: importlib.metadata.EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    return dist is not None and dist.name == BUILTIN_DISTRIBUTION


def _discover() -> tuple[Network, ...]:
    builtins: list[Network] = []
    plugins: list[Network] = []
    values: dict[str, str] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in values:
            if values[ep.name] != ep.value:
                log.warning(
                    "network %r registered twice (%s, %s): using the first",
                    ep.name,
                    values[ep.name],
                    ep.value,
                )
            continue
        values[ep.name] = ep.value
        try:
            found = ep.load()
            network = found() if callable(found) and not isinstance(found, Network) else found
        except Exception:  # a plugin's ImportError, AttributeError, or a factory's own failure
            log.exception("network %r (%s) cannot be loaded: left out", ep.name, ep.value)
            continue
        if not isinstance(network, Network):
            log.error("network %r (%s) gave %s, not a Network: left out", ep.name, ep.value, type(network))
            continue
        if network.name != ep.name or not NAME_PATTERN.match(network.name):
            log.error(
                "network %r (%s) is named %r: a network's name is its entry point's, of lowercase letters, "
                "digits and _ (2 to 20, starting with a letter): left out",
                ep.name,
                ep.value,
                network.name,
            )
            continue
        builtin = _is_builtin(ep)
        if network.builtin != builtin:
            network = replace(network, builtin=builtin)
        (builtins if builtin else plugins).append(network)
    key = lambda n: n.name  # noqa: E731
    return tuple(sorted(builtins, key=key) + sorted(plugins, key=key))


def networks() -> tuple[Network, ...]:
    """Every registered network: built-ins first, then plugins, each in name order."""
    found = _NETWORKS
    if found is None:
        with _GUARD:
            found = _NETWORKS if _NETWORKS is not None else _remember(_discover())
    return found


def _remember(found: tuple[Network, ...]) -> tuple[Network, ...]:
    global _NETWORKS, _BY_NAME
    _BY_NAME = {n.name: n for n in found}
    _NETWORKS = found
    return found


def reload() -> tuple[Network, ...]:
    """Read the entry points again (after installing or removing a plugin in this process)."""
    with _GUARD:
        return _remember(_discover())


def names() -> tuple[str, ...]:
    return tuple(n.name for n in networks())


def find(name: str) -> Network | None:
    networks()
    return _BY_NAME.get(name)


def get(name: str) -> Network:
    """The network `name`; UnknownNetwork when none is registered under it."""
    network = find(name)
    if network is None:
        raise UnknownNetwork(name)
    return network


def label(name: str) -> str:
    """The network's name as people write it (the name itself for a network no longer registered)."""
    network = find(name)
    return network.label if network is not None else name
