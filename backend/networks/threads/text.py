"""How Threads counts a post (imports nothing of the product: its emulator reads it too): text at most 500
characters, an emoji counted as its UTF-8 bytes (TH-R11); a carousel of 2 to 20 items (TH-R8)."""

from __future__ import annotations

import unicodedata

MAX_TEXT = 500  # TH-R11: "Text posts are limited to 500 characters."
CAROUSEL = (2, 20)  # TH-R8: "at least 2 and up to 20 total images or videos or a mix of the two"
# what joins an emoji's code points (zero-width joiner, variation selectors, keycap, skin tones' modifiers are So)
EMOJI_JOINERS = frozenset({"\u200d", "\ufe0e", "\ufe0f", "\u20e3"})


def _emoji_part(ch: str) -> bool:
    cp = ord(ch)
    return (
        cp > 0xFFFF  # every code point outside the BMP (strictest reading: emoji and the like)
        or ch in EMOJI_JOINERS
        or (cp >= 0x2000 and unicodedata.category(ch) == "So")  # ☀ ✂ ❤ …: BMP symbols drawn as emoji
        or 0x1F1E6 <= cp <= 0x1F1FF
    )


def text_length(text: str) -> int:
    """The text's length as Threads counts it (TH-R11: "Emojis are counted as the number of UTF-8 bytes"): every
    other character counts one."""
    return sum(len(ch.encode("utf-8")) if _emoji_part(ch) else 1 for ch in text)
