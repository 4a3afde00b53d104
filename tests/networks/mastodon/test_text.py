"""A status's length as the instance counts it (StatusLengthValidator; research B.1b M15, B.4 tests 12-13)."""

from __future__ import annotations

from backend.networks.mastodon.text import countable_text, graphemes, status_length


def test_graphemes_not_code_points() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one grapheme of five code points
    assert graphemes(family * 3) == 3
    assert status_length("é" * 10) == 10
    assert status_length("e\u0301" * 10) == 10  # combining accents: 10 graphemes, 20 code points


def test_a_url_counts_the_reserved_length_whatever_its_own() -> None:
    url = "https://example.org/" + "a" * 60  # 80 characters
    text = "x" * 480 + " " + url
    assert len(text) == 561
    assert status_length(text) == 480 + 1 + 23
    assert status_length("short http://a.co") == 6 + 23
    assert status_length(text, url_chars=30) == 480 + 1 + 30  # the instance's characters_reserved_per_url


def test_trailing_punctuation_is_not_part_of_the_url() -> None:
    assert countable_text("see https://example.org/page.") == "see " + "x" * 23 + "."
    assert countable_text("(https://example.org/a)") == "(" + "x" * 23 + ")"
    balanced = "https://en.wikipedia.org/wiki/Mastodon_(software)"
    assert countable_text(balanced) == "x" * 23


def test_a_remote_mention_counts_as_its_local_part() -> None:
    assert status_length("@alice@example.social") == 6
    assert status_length("hi @alice@example.social and @bob") == len("hi @alice and @bob")
    assert countable_text("mail me: me@example.org") == "mail me: me@example.org"  # not a mention


def test_the_content_warning_is_counted() -> None:
    assert status_length("body", spoiler_text="cw: food") == 12
    assert status_length("", spoiler_text="cw") == 2


def test_what_is_not_a_url_counts_its_characters() -> None:
    assert status_length("http://nohost") == len("http://nohost")
    assert status_length("example.org") == len("example.org")  # without a scheme: counted as written
