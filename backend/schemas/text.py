"""Text rules shared by the API, the network rules and the front end's local checks. Pure functions, no I/O."""

from __future__ import annotations

import unicodedata

# What shows nothing: separators (Zs, Zl, Zp), controls (Cc), format characters (Cf: U+200B zero width space,
# U+200D joiner, U+2060 word joiner, U+FEFF, the bidi marks…), combining marks with nothing to combine with (Mn, Me),
# and the letters and symbols fonts draw blank (Hangul fillers, the braille blank).
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Mn", "Me"})
_BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def has_visible_text(text: str) -> bool:
    """Whether `text` shows anything: a text of whitespace and invisible characters only (U+200B…) is no text —
    a network would publish a post that says nothing (`content_required_for_target` where a text is needed)."""
    return any(
        not ch.isspace()
        and ch not in _BLANK_CHARACTERS
        and unicodedata.category(ch) not in _INVISIBLE_CATEGORIES
        for ch in text
    )
