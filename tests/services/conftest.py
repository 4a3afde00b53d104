"""Fixtures the publishing services' tests share (a module's own fixture of the same name takes precedence)."""

from __future__ import annotations

import pytest

from backend.services import accounts


@pytest.fixture
def sandbox(settings, owner, fast):  # type: ignore[no-untyped-def]
    """One public sandbox account per network, by platform (on the module's own `fast` settings)."""
    return {
        a["platform"]: a for a in accounts.connect_sandbox_defaults(settings, owner.workspace_id, public=True)
    }
