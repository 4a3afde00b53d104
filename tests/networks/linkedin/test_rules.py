"""LinkedIn's rules: the 3,000-character limit applies to the commentary as sent, escapes included."""

from __future__ import annotations

from backend.networks.linkedin.rules import escape_commentary, validate
from backend.networks.rules.common import CONTENT_TOO_LONG


def test_the_limit_counts_the_escaped_commentary() -> None:
    fits = "x" * 2990 + "#a #b"  # 2,995 raw, 2,997 escaped
    assert len(escape_commentary(fits)) == 2997 and validate(fits, [], None) == []
    tight = "x" * 2994 + "#a #b"  # 2,999 raw, 3,001 escaped: refused before LinkedIn refuses it
    assert len(tight) <= 3000 < len(escape_commentary(tight))
    assert CONTENT_TOO_LONG in validate(tight, [], None)
