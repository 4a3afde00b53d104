"""Which generation provider runs: the entry points of `socialpub.generation_providers`, chosen by name.

Built-in providers are registered in pyproject.toml exactly like a plugin's (`[project.entry-points.
"socialpub.generation_providers"]`, `name = "module:Factory"`), so there is one way to find a provider: the
installed distributions' metadata. An entry point loads a `ProviderFactory` (usually the provider class), called
with no argument; it reads its own `SOCIALPUB_GENERATION_<NAME>_…` settings. `SOCIALPUB_GENERATION_PROVIDER`
(`Settings.generation_provider`, `local` by default) names the one the worker uses.

After pyproject.toml's entry points change, the distribution must be reinstalled (`pip install -e .`; `make`'s
setup step does it whenever pyproject.toml is newer than the venv's stamp) for them to be seen.
"""

from __future__ import annotations

import importlib.metadata
import logging

from pydantic import ValidationError

from backend.config import Settings
from backend.generation.provider import ENTRY_POINT_GROUP, Provider

log = logging.getLogger("socialpub.generation")


class ProviderConfigError(RuntimeError):
    """The configured provider cannot be used: no provider of that name, its settings are invalid, or what its
    entry point loads is not a provider. An operator's mistake, not a user's: fix the environment."""


def provider_entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The registered providers by name. Two distributions registering the same name: the first found wins
    (sys.path order), and the clash is logged."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in found:
            if found[ep.name].value != ep.value:
                log.warning(
                    "generation provider %r registered twice (%s, %s): using the first",
                    ep.name,
                    found[ep.name].value,
                    ep.value,
                )
            continue
        found[ep.name] = ep
    return found


def available_providers() -> list[str]:
    """The names `SOCIALPUB_GENERATION_PROVIDER` accepts, sorted."""
    return sorted(provider_entry_points())


def get_provider(settings: Settings) -> Provider:
    """Build the provider `settings.generation_provider` names. Raises ProviderConfigError with the available
    names when there is no such provider, or with the provider's own settings errors when they are invalid."""
    name = settings.generation_provider.strip().lower()
    eps = provider_entry_points()
    ep = eps.get(name)
    if ep is None:
        names = ", ".join(sorted(eps)) or "none (is the socialpub distribution installed?)"
        raise ProviderConfigError(
            f"SOCIALPUB_GENERATION_PROVIDER={settings.generation_provider!r} names no generation provider; "
            f"available: {names} (entry-point group {ENTRY_POINT_GROUP!r})"
        )
    try:
        factory = ep.load()
    except Exception as exc:  # an ImportError or AttributeError of a broken plugin
        raise ProviderConfigError(
            f"generation provider {name!r} ({ep.value}) cannot be loaded: {exc}"
        ) from exc
    env = f"SOCIALPUB_GENERATION_{name.upper()}_"
    try:
        provider = factory()
    except ValidationError as exc:
        problems = "; ".join(
            f"{env}{'_'.join(str(p) for p in e['loc']).upper()}: {e['msg']}" for e in exc.errors()
        )
        raise ProviderConfigError(f"generation provider {name!r}: invalid settings: {problems}") from exc
    except ProviderConfigError:
        raise
    if not isinstance(provider, Provider):
        raise ProviderConfigError(
            f"generation provider {name!r} ({ep.value}) built {type(provider).__name__}, "
            "which has no `name` and `generate`"
        )
    return provider
