"""The networks this installation has (its registry: the built-ins and the installed plugins), as GET /v1/networks
gives them, for the front end's commands that read files only and reach no backend: `socialpub recipes validate`
and `socialpub recipes schema`. Everything else in the front end reads the server's list through its client."""

from __future__ import annotations

from typing import Any


def installed() -> list[dict[str, Any]]:
    """GET /v1/networks' `items`, of this installation."""
    from backend.services.networks import (
        catalogue,  # deferred: the registry and the services, only when asked
    )

    return catalogue()
