"""The emulated developer app of a network: what a real network knows of the app that calls it.

A real network answers an app by what that app was approved for: the products or permissions it holds
(LinkedIn's self-serve "Share on LinkedIn" and "Sign In with LinkedIn" vs the Community Management API;
Meta's permissions after App Review), whether it was audited (TikTok) or verified (Google), its kind (a
TikTok Desktop app uses a hex PKCE challenge), and the API versions active on the day. Each emulator reads
its app from the sandbox configuration and refuses what the real network refuses such an app, in the
network's own shape. The default is a NEW app — self-serve products only, not audited, not verified — what a
new user has on day one.

Configured by `SOCIALPUB_SANDBOX_APPS` (JSON: {"tiktok": {"audited": true, "kind": "desktop"},
"linkedin": {"products": ["share", "openid", "community"]}}) and by `socialpub sandbox serve NETWORK`'s
options. Imports nothing of the product.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any


@dataclass(frozen=True)
class EmulatedApp:
    """products: the network's product (or permission) names the app holds; empty: the network's default for
    a new app (each emulator says which). audited / verified: the network's review of the app. kind: the
    app's kind where the network has several ("web", "desktop", "native"); "" for the network's default.
    today: the day API versions are judged on (None: the sandbox clock's)."""

    products: frozenset[str] = field(default_factory=frozenset)
    audited: bool = False
    verified: bool = False
    kind: str = ""
    today: date | None = None

    def holds(self, product: str) -> bool:
        return product in self.products

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EmulatedApp:
        unknown = set(d) - {"products", "audited", "verified", "kind", "today"}
        if unknown:
            raise ValueError(f"unknown emulated app settings: {', '.join(sorted(unknown))}")
        products = d.get("products") or ()
        if isinstance(products, str) or not all(isinstance(p, str) for p in products):
            raise ValueError("products: a list of product names")
        today = d.get("today")
        return cls(
            products=frozenset(products),
            audited=bool(d.get("audited", False)),
            verified=bool(d.get("verified", False)),
            kind=str(d.get("kind") or ""),
            today=date.fromisoformat(today) if today else None,
        )


NEW_APP = EmulatedApp()


def parse_apps(raw: str | dict[str, Any] | None) -> tuple[tuple[str, EmulatedApp], ...]:
    """SOCIALPUB_SANDBOX_APPS (JSON text or an already parsed mapping) as SandboxConfig.apps."""
    if not raw:
        return ()
    data = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(data, dict):
        raise ValueError("SOCIALPUB_SANDBOX_APPS: a JSON object of network name -> app settings")
    return tuple(sorted((str(k), EmulatedApp.from_dict(v or {})) for k, v in data.items()))
