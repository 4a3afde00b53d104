"""Reading YAML with positions, as YAML 1.2 (what editors and the JSON Schema assume), with either parser."""

from __future__ import annotations

import pytest

from recipes import source


@pytest.fixture(params=[True, False], ids=["libyaml", "pure"])
def fast(request: pytest.FixtureRequest) -> bool:
    if request.param and source._FAST is None:
        pytest.skip("PyYAML without libyaml")
    return bool(request.param)


def test_core_schema_types(fast: bool) -> None:
    doc = source.read(
        "on: [9:00, 17:30, 2027-01-05, yes, no, off, true, False, 12, 0x1f, 0o17, 1.5, .inf, ~, null, "
        "'09:00', !!str 12]\n",
        fast=fast,
    )
    assert doc.data == {
        "on": [
            "9:00",
            "17:30",
            "2027-01-05",
            "yes",
            "no",
            "off",
            True,
            False,
            12,
            31,
            15,
            1.5,
            float("inf"),
            None,
            None,
            "09:00",
            "12",
        ]
    }


def test_empty_document(fast: bool) -> None:
    assert source.read("", fast=fast).data is None
    assert source.read("# only a comment\n", fast=fast).node is None


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        (
            "a: [1, 2\n",
            1,
            4,
            "a list in brackets [ ] opened here is not closed (the parser gave up at line 2",
        ),
        ("a: {b: 1\n", 1, 4, "a mapping in braces { } opened here is not closed"),
        ("a: 1\nb: 'open\n", 2, 4, "a quoted string opened here is not closed"),
        ("a: 1\n  b: 2\n", 2, 4, "mapping values are not allowed"),
        ("a: *x\n", 1, 4, "undefined alias"),
        ("- a\n---\n- b\n", 2, 1, "single document"),
        ("a: 1\nb: 2\na: 3\n", 3, 1, "duplicate key 'a' (first on line 1)"),
        ("a: !!binary aGVsbG8=\n", 1, 4, "unsupported tag"),
        ("a: !custom x\n", 1, 4, "unsupported tag"),
        ("? [x]\n: 1\n", 1, 3, "a key must be a plain value"),
        ("a: &x [1, *x]\n", 1, 4, "alias refers to the value that contains it"),
    ],
)
def test_errors_with_positions(fast: bool, text: str, line: int, column: int, fragment: str) -> None:
    with pytest.raises(source.SourceError) as err:
        source.read(text, fast=fast)
    assert (err.value.line, err.value.column) == (line, column)
    assert fragment in err.value.message
    assert err.value.code == "invalid_yaml"


def test_alias_bombs_stop(fast: bool) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcde", "bcdef", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(source.SourceError, match="more than"):
        source.read("\n".join(lines) + "\n", fast=fast)


def test_merge_keys_own_keys_win(fast: bool) -> None:
    doc = source.read("base: &b {x: 1, y: 2}\nitem: {<<: *b, y: 3}\nboth: {<<: [*b, {z: 4}]}\n", fast=fast)
    assert doc.data["item"] == {"x": 1, "y": 3}
    assert doc.data["both"] == {"x": 1, "y": 2, "z": 4}


def test_locate_values_keys_missing_and_union_tags(fast: bool) -> None:
    doc = source.read("posts:\n  - id: a\n    targets: [facebook, {platform: x}]\n", fast=fast)
    at = source.locate(doc.node, ("posts", 0, "targets", 1, "account", "platform"))
    assert (at.line, at.column, at.path, at.found) == (3, 36, "posts[0].targets[1].platform", True)
    at = source.locate(doc.node, ("posts", 0, "targets"), key=True)
    assert (at.line, at.column) == (3, 5)
    at = source.locate(doc.node, ("posts", 0, "content"))
    assert (at.line, at.column, at.found, at.path) == (2, 5, False, "posts[0].content")


@pytest.mark.parametrize("fast", [True, False], ids=["libyaml", "pure"])
def test_an_unclosed_quote_is_reported_where_it_opened_not_where_the_parser_gave_up(fast: bool) -> None:
    """Issue 33: the quote left open on line 8 swallows line 9's `at:`; the parser only fails on line 9 (line 10
    in the newcomer's file). The error points at the quote, and says where the parser gave up."""
    text = (
        "timezone: Europe/Paris\n"
        "posts:\n"
        "  - id: one\n"
        "    targets: [facebook]\n"
        '    at: "2030-01-15 09:00"\n'
        "  - id: two\n"
        "    targets: [facebook]\n"
        '    content: "unclosed\n'
        '    at: "2030-01-16 09:00"\n'
        "  - id: three\n"
        "    content: ok\n"
    )
    with pytest.raises(source.SourceError) as err:
        source.read(text, fast=fast)
    assert (err.value.line, err.value.column) == (8, 14), err.value.message
    assert "is its closing quote missing?" in err.value.message and "gave up at line 9" in err.value.message


def test_a_quoted_string_over_several_lines_is_still_valid() -> None:
    assert source.read('a: "one\n  two: three"\nb: 2\n').data == {"a": "one two: three", "b": 2}
