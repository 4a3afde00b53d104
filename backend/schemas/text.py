"""Text rules shared by the API, the network rules and the front end's local checks. Pure functions, no I/O.

How a network counts the length of a text (`NetworkLimits.text_unit`) is said once, here: the networks' rules, the posts
API's checks and the front ends' counters (the compose screen, the recipes) all count with these. The emulators keep
their own counters on purpose: an emulator that counted with the product's code would agree with its bugs.

- `characters`: code points (Python's `len`)
- `utf16`: UTF-16 code units (TikTok)
- `graphemes`: user-perceived characters, Unicode extended grapheme clusters (Bluesky, Mastodon): 👨‍👩‍👧‍👦 is one
- `escaped`: characters once each of ESCAPED_RESERVED is backslash-escaped (LinkedIn's "little text": the bound
  applies to the text as sent)
- `utf8`: UTF-8 bytes
- `emoji_utf8`: characters, an emoji counted as its UTF-8 bytes (Threads: "Emojis are counted as the number of
  UTF-8 bytes"; every code point outside the BMP, the joiners and selectors that build emoji, BMP symbols drawn as
  emoji and regional indicators — the strictest reading)

A client that meets a unit it does not know counts characters: the server's own check is the one that counts."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import regex

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


ESCAPED_RESERVED = "\\|{}@[]()<>#*_~"
# what joins an emoji's code points: zero-width joiner, variation selectors, keycap (skin tones' modifiers are So)
EMOJI_JOINERS = frozenset({"\u200d", "\ufe0e", "\ufe0f", "\u20e3"})
_GRAPHEME = regex.compile(r"\X")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def graphemes(text: str) -> int:
    """User-perceived characters (Unicode extended grapheme clusters, as Intl.Segmenter counts them)."""
    return len(_GRAPHEME.findall(text))


def escaped_len(text: str) -> int:
    """Characters once each reserved character is backslash-escaped (counted twice)."""
    return len(text) + sum(text.count(c) for c in ESCAPED_RESERVED)


def _emoji_part(ch: str) -> bool:
    cp = ord(ch)
    return (
        cp > 0xFFFF  # every code point outside the BMP (strictest reading: emoji and the like)
        or ch in EMOJI_JOINERS
        or (cp >= 0x2000 and unicodedata.category(ch) == "So")  # ☀ ✂ ❤ …: BMP symbols drawn as emoji
        or 0x1F1E6 <= cp <= 0x1F1FF
    )


def emoji_utf8_len(text: str) -> int:
    """Characters, each emoji part counted as its UTF-8 bytes."""
    return sum(len(ch.encode("utf-8")) if _emoji_part(ch) else 1 for ch in text)


COUNTERS: dict[str, Callable[[str], int]] = {
    "characters": len,
    "utf16": utf16_len,
    "graphemes": graphemes,
    "escaped": escaped_len,
    "emoji_utf8": emoji_utf8_len,
    "utf8": utf8_len,
}
TEXT_UNITS = tuple(COUNTERS)


def text_length(unit: str, text: str) -> int:
    """The text's length in `unit` (characters for a unit not known here)."""
    return COUNTERS.get(unit, len)(text)
