"""Content variables: every one, format specs, literal braces, and the errors."""

from __future__ import annotations

from datetime import datetime
from pathlib import PurePath

import pytest

from recipes import template
from recipes.template import TemplateError, parse


def vals(
    media: tuple[str, ...] = ("images/launch.jpg", "clips/b.mp4"),
    when: datetime | None = None,
    n: int = 3,
    total: int = 12,
) -> dict:
    return template.values(
        entry_id="launch",
        set_name="shop",
        targets=("instagram", "tiktok"),
        when=when or datetime(2027, 1, 5, 9, 7),
        media=[PurePath(m) for m in media],
        n=n,
        total=total,
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("{id}", "launch"),
        ("{set}", "shop"),
        ("{targets}", "instagram, tiktok"),
        ("{n}/{total}", "3/12"),
        ("{date}", "2027-01-05"),
        ("{time}", "09:07"),
        ("{year}", "2027"),
        ("{month}", "1"),
        ("{month:02d}", "01"),
        ("{day}", "5"),
        ("{day:02d}", "05"),
        ("{hour}", "9"),
        ("{hour:02d}", "09"),
        ("{minute}", "7"),
        ("{minute:02d}", "07"),
        ("{month_name}", "January"),
        ("{month_abbr}", "Jan"),
        ("{weekday}", "Tuesday"),
        ("{weekday_abbr}", "Tue"),
        ("{file}", "launch.jpg"),
        ("{file.name}", "launch.jpg"),
        ("{file.stem}", "launch"),
        ("{file.suffix}", ".jpg"),
        ("{media[0]}", "launch.jpg"),
        ("{media[1]}", "b.mp4"),
        ("{media[1].name}", "b.mp4"),
        ("{media[1].stem}", "b"),
        ("{media[1].suffix}", ".mp4"),
        ("{files}", "launch.jpg, b.mp4"),
        ("{id:>8}", "  launch"),
    ],
)
def test_every_variable(text: str, expected: str) -> None:
    t = parse(text)
    t.check(2)
    assert t.render(vals()) == expected


def test_every_documented_variable_renders() -> None:
    for name in template.VARIABLES:
        field = "{media[0]}" if name == "media[i]" else f"{{{name}}}"
        assert parse(field).render(vals()), name


def test_literal_braces_and_plain_text() -> None:
    assert parse("{{id}} is {id}, }} and {{").render(vals()) == "{id} is launch, } and {"
    assert parse("no variables").render(vals()) == "no variables"
    assert parse("").render(vals()) == ""


def test_weekday_names_are_english_and_dates_follow_the_given_wall_clock() -> None:
    v = vals(when=datetime(2027, 10, 31, 2, 30))
    assert parse("{weekday} {day} {month_name} {time}").render(v) == "Sunday 31 October 02:30"


@pytest.mark.parametrize(
    "text, code, fragment",
    [
        ("Our {weekdy} launch", "unknown_variable", "unknown variable {weekdy}"),
        ("{file.size}", "unknown_variable", "expected one of: name, stem, suffix"),
        ("{id.stem}", "unknown_variable", "id has no attributes"),
        ("{media}", "unknown_variable", "give an index"),
        ("{date[0]}", "unknown_variable", "only media takes an index"),
        ("{ id }", "unknown_variable", "is not a variable"),
        ("{}", "unknown_variable", "is not a variable"),
        ("open {id", "invalid_template", "unclosed '{'"),
        ("a } b", "invalid_template", "single '}'"),
        ("{a{b}", "invalid_template", "unclosed '{'"),
    ],
)
def test_parse_errors(text: str, code: str, fragment: str) -> None:
    with pytest.raises(TemplateError) as err:
        parse(text)
    assert err.value.code == code
    assert fragment in str(err.value)


def test_unknown_variable_lists_the_available_ones() -> None:
    with pytest.raises(TemplateError, match=r"available: \{id\}, \{set\}"):
        parse("{nope}")


@pytest.mark.parametrize(
    "text, media, fragment",
    [
        ("{file.stem}", 0, "the entry has no media"),
        ("{files}", 0, None),
        ("{media[2].stem}", 2, "the entry has 2 media files (media[0] to media[1])"),
        ("{weekday:02d}", 1, "format spec"),
    ],
)
def test_check_knows_the_media_count_and_the_format_specs(
    text: str, media: int, fragment: str | None
) -> None:
    t = parse(text)
    if fragment is None:
        t.check(media)
        return
    with pytest.raises(
        TemplateError,
        match=fragment.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]"),
    ):
        t.check(media)
