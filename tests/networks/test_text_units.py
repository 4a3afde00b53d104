"""The front ends count a text the way the server checks it: for every registered network, the compose screen's and
the recipes' local check (from GET /v1/networks: `maxText` counted in `textUnit`, and `descriptionMaxBytes`) says a
text is too long exactly when the network's rules do, at each bound and one unit past it."""

from __future__ import annotations

import pytest

from backend.networks.base import MediaRef
from backend.networks.registry import get, names
from backend.schemas.text import TEXT_UNITS, text_length
from socialpub_tui.checks import check_target
from tests.support.networks import catalogue, server_codes

VID = MediaRef("https://media.test/v.mp4", "video", "video/mp4")
IMG = MediaRef("https://media.test/a.jpg", "image", "image/jpeg", 1080, 1080)
# what the units count differently: an accented letter, an emoji (astral, 2 UTF-16 units, 4 UTF-8 bytes), a family
# (one grapheme of 7 code points), a BMP symbol drawn as emoji, LinkedIn's reserved characters
PATTERN = "é 😀 👨‍👩‍👧‍👦 ❤ #tag (x) "
TOO_LONG = "content_too_long_for_target"


def text_of(unit: str, n: int) -> str:
    """A text of exactly `n` units made of PATTERN, padded with plain letters."""
    text = ""
    while text_length(unit, text + PATTERN) <= n:
        text += PATTERN
    while text_length(unit, text) < n:
        text += "a"
    assert text_length(unit, text) == n
    return text


def server_says_too_long(network: str, text: str, media: MediaRef) -> bool:
    return TOO_LONG in server_codes(network, text, [media])


def bounds(network: str) -> list[str]:
    limits = get(network).limits
    texts = [text_of(limits.text_unit, limits.max_text)]
    if limits.description_max_bytes:
        texts.append(text_of("utf8", limits.description_max_bytes))
    return [t for at in texts for t in (at[:-1], at, at + "a")]


@pytest.mark.parametrize("network", names())
def test_the_front_ends_count_as_the_server_checks(network: str) -> None:
    assert get(network).limits.text_unit in TEXT_UNITS
    front = catalogue()
    media = IMG if network == "bluesky" else VID
    for text in bounds(network):
        server = server_says_too_long(network, text, media)
        local = TOO_LONG in [p.code for p in check_target(front, network, text, [media.kind])]
        assert local == server, (network, text_length(get(network).limits.text_unit, text))
    at_max = text_of(get(network).limits.text_unit, get(network).limits.max_text)
    assert server_says_too_long(network, at_max + "a", media)  # the advertised bound binds


def test_threads_counts_an_emoji_as_its_bytes() -> None:
    assert text_length("emoji_utf8", "hi 😀") == 3 + 4
    assert text_length("characters", "hi 😀") == 4
    assert text_length("unknown-unit", "hi 😀") == 4  # a unit a client does not know: characters
