"""The provider registry: providers come from the `socialpub.generation_providers` entry points, built-ins too."""

from __future__ import annotations

import importlib.metadata
import sys
import tomllib
import types
from pathlib import Path

import pytest

from backend.config import Settings
from backend.generation.local import LocalProvider
from backend.generation.provider import ENTRY_POINT_GROUP, GenerationRequest, Produced, Provider
from backend.generation.registry import ProviderConfigError, available_providers, get_provider

ROOT = Path(__file__).resolve().parents[2]


def test_builtin_local_is_declared_as_an_entry_point_in_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"][ENTRY_POINT_GROUP] == {
        "local": "backend.generation.local:LocalProvider",
        "openai": "backend.generation.openai_images:OpenAIImagesProvider",
        "runway": "backend.generation.runway:RunwayProvider",
    }
    for value in project["entry-points"][
        ENTRY_POINT_GROUP
    ].values():  # each loads and builds with no argument
        provider = importlib.metadata.EntryPoint("x", value, ENTRY_POINT_GROUP).load()()
        assert isinstance(provider, Provider)


def test_builtin_local_is_found_through_the_installed_entry_points() -> None:
    # fails when the installed distribution's metadata predates the entry point: reinstall (`make setup`)
    assert "local" in available_providers()
    provider = get_provider(Settings(generation_provider="local"))
    assert isinstance(provider, LocalProvider)
    assert isinstance(provider, Provider)
    assert provider.name == "local"


def test_the_default_provider_is_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOCIALPUB_GENERATION_PROVIDER", raising=False)
    assert Settings().generation_provider == "local"
    monkeypatch.setenv("SOCIALPUB_GENERATION_PROVIDER", "other")
    assert Settings().generation_provider == "other"


def test_an_unknown_name_is_a_configuration_error_listing_the_available_ones() -> None:
    with pytest.raises(ProviderConfigError) as err:
        get_provider(Settings(generation_provider="dall-e-9"))
    message = str(err.value)
    assert "SOCIALPUB_GENERATION_PROVIDER='dall-e-9'" in message
    assert "local" in message


class _PluginProvider:
    name = "plugin"

    def generate(self, request: GenerationRequest, out_dir: Path, progress=None) -> Produced:  # type: ignore[no-untyped-def]
        path = out_dir / "plugin.png"
        path.write_bytes(b"not really a png")
        return Produced(path=path, mime_type="image/png", width=1, height=1)


class _NotAProvider:
    pass


@pytest.fixture
def plugin_module(monkeypatch: pytest.MonkeyPatch) -> str:
    """A plugin's module, importable as `socialpub_test_plugin`, and the entry points with it added."""
    module = types.ModuleType("socialpub_test_plugin")
    module.PluginProvider = _PluginProvider  # type: ignore[attr-defined]
    module.NotAProvider = _NotAProvider  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "socialpub_test_plugin", module)
    real = importlib.metadata.entry_points

    def entry_points(**params):  # type: ignore[no-untyped-def]
        found = list(real(**params))
        if params.get("group") == ENTRY_POINT_GROUP:
            found += [
                importlib.metadata.EntryPoint(
                    "plugin", "socialpub_test_plugin:PluginProvider", ENTRY_POINT_GROUP
                ),
                importlib.metadata.EntryPoint("broken", "socialpub_test_plugin:Missing", ENTRY_POINT_GROUP),
                importlib.metadata.EntryPoint("odd", "socialpub_test_plugin:NotAProvider", ENTRY_POINT_GROUP),
            ]
        return importlib.metadata.EntryPoints(found)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    return "socialpub_test_plugin"


def test_a_plugin_registered_through_the_entry_point_group_is_chosen_by_name(
    plugin_module: str, tmp_path: Path
) -> None:
    assert {"local", "plugin"} <= set(available_providers())
    provider = get_provider(Settings(generation_provider="plugin"))
    assert isinstance(provider, _PluginProvider)
    request = GenerationRequest(type="image", prompt="a plugin", aspect_ratio="1:1", duration_sec=None)
    assert provider.generate(request, tmp_path).path.read_bytes() == b"not really a png"
    # the built-in stays reachable beside it
    assert isinstance(get_provider(Settings(generation_provider="LOCAL")), LocalProvider)


def test_a_plugin_that_cannot_load_or_is_no_provider_is_a_configuration_error(plugin_module: str) -> None:
    with pytest.raises(ProviderConfigError, match="'broken'.*cannot be loaded"):
        get_provider(Settings(generation_provider="broken"))
    with pytest.raises(ProviderConfigError, match="'odd'.*NotAProvider"):
        get_provider(Settings(generation_provider="odd"))


def test_invalid_provider_settings_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOCIALPUB_GENERATION_LOCAL_FPS", "1000")
    with pytest.raises(ProviderConfigError, match="SOCIALPUB_GENERATION_LOCAL_FPS"):
        get_provider(Settings(generation_provider="local"))
