"""How Threads counts a post (its emulator reads it too): text at most 500
characters, an emoji counted as its UTF-8 bytes (TH-R11); a carousel of 2 to 20 items (TH-R8)."""

from __future__ import annotations

from backend.schemas.text import emoji_utf8_len

MAX_TEXT = 500  # TH-R11: "Text posts are limited to 500 characters."
CAROUSEL = (2, 20)  # TH-R8: "at least 2 and up to 20 total images or videos or a mix of the two"


def text_length(text: str) -> int:
    """The text's length as Threads counts it (TH-R11: "Emojis are counted as the number of UTF-8 bytes"): every
    other character counts one (the `emoji_utf8` text unit)."""
    return emoji_utf8_len(text)
