"""The pydantic models of a recipe file and the JSON Schema `socialpub recipes schema` prints."""

from __future__ import annotations

import json

import jsonschema
import pytest
from pydantic import ValidationError

from recipes import source
from recipes.load import load
from recipes.schema import SCHEMA_ID, Defaults, Entry, RecipeFile, Repeat, json_schema
from recipes.template import VARIABLES
from tests.support.networks import catalogue

from .conftest import EXAMPLES


def test_json_schema_has_id_title_descriptions_and_examples() -> None:
    schema = json_schema(catalogue())
    assert schema["$id"] == SCHEMA_ID == "https://socialpub.dev/schemas/recipe.json"
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] and schema["description"] and schema["examples"]
    jsonschema.Draft202012Validator.check_schema(schema)
    json.dumps(schema)  # plain JSON
    defs = schema["$defs"]
    for name in ("Entry", "Repeat", "Defaults", "Generate"):
        assert defs[name]["description"] and defs[name]["examples"], name
        assert defs[name]["additionalProperties"] is False, name
        for prop, body in defs[name]["properties"].items():
            assert body.get("description"), (name, prop)
    assert defs["Entry"]["properties"]["generate"]["anyOf"][0] == {"$ref": "#/$defs/Generate"}
    assert "generate" not in defs["Defaults"]["properties"]  # per entry only
    gen = defs["Generate"]
    assert gen["required"] == ["type", "prompt"] and gen["properties"]["type"]["enum"] == ["image", "video"]
    assert gen["properties"]["aspectRatio"]["enum"] == ["9:16", "1:1", "16:9"]
    assert gen["properties"]["aspectRatio"]["default"] == "9:16"
    assert (gen["properties"]["prompt"]["minLength"], gen["properties"]["prompt"]["maxLength"]) == (3, 1800)
    _validator().validate({"posts": [{"id": "a", "at": "2027-01-15 09:00", "generate": gen["examples"][1]}]})


def test_the_content_description_lists_every_variable_and_the_dst_rules_are_documented() -> None:
    schema = json_schema(catalogue())
    content = schema["$defs"]["Entry"]["properties"]["content"]["description"]
    for name in VARIABLES:
        assert "{" + name + "}" in content, name
    assert "{{" in content
    repeat = schema["$defs"]["Repeat"]["description"]
    assert "first valid minute after" in repeat and "takes the first" in repeat
    assert "merged per network" in schema["$defs"]["Defaults"]["description"]


def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json_schema(catalogue()))


@pytest.mark.parametrize("name", ["launch.yaml", "weekly.yaml", "videos.yaml"])
def test_the_examples_satisfy_the_json_schema(name: str) -> None:
    data = source.read((EXAMPLES / name).read_text(encoding="utf-8")).data  # as an editor reads it (YAML 1.2)
    errors = list(_validator().iter_errors(data))
    assert errors == [], [e.message for e in errors]


def test_the_schema_examples_satisfy_the_schema_and_the_models() -> None:
    schema = json_schema(catalogue())
    for example in schema["examples"]:
        assert not list(_validator().iter_errors(example))
        RecipeFile.model_validate(example)
    for example in schema["$defs"]["Entry"]["examples"]:
        Entry.model_validate(example)
    for example in schema["$defs"]["Repeat"]["examples"]:
        Repeat.model_validate(example)


@pytest.mark.parametrize(
    "bad",
    [
        {"posts": [{"id": "a", "at": "2027-01-15 09:00", "contnet": "typo"}]},
        {"posts": [{"id": "a", "at": "2027-01-15 09:00", "targets": ["facebok"]}]},
        {
            "posts": [
                {
                    "id": "a",
                    "repeat": {"every": "fortnight", "times": ["09:00"], "start": "2027-01-01", "count": 2},
                }
            ]
        },
        {"posts": [{"id": "a", "at": "2027-01-15 09:00", "options": {"youtube": {"privacy": "hidden"}}}]},
        {"timezone": "Europe/Paris"},
    ],
)
def test_the_json_schema_catches_what_an_editor_should_flag(bad: dict, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert list(_validator().iter_errors(bad))
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps(bad))  # JSON is YAML
    # the loader flags it too: the models, then the networks' names and options (the server's)
    assert load(path, networks=catalogue()).problems


def test_models_forbid_unknown_keys_and_take_generate_per_entry() -> None:
    with pytest.raises(ValidationError, match="extra_forbidden|Extra inputs"):
        Repeat.model_validate({"every": "day", "times": ["09:00"], "start": "2027-01-01", "count": 1, "x": 1})
    e = Entry.model_validate(
        {"id": "a", "at": "2027-01-15 09:00", "generate": {"prompt": "a cup", "type": "image"}}
    )
    assert e.generate is not None and (e.generate.aspect_ratio, e.generate.duration) == ("9:16", None)
    v = Entry.model_validate(
        {
            "id": "a",
            "at": "2027-01-15 09:00",
            "generate": {"prompt": "beans", "type": "video", "sources": "a.jpg"},
        }
    ).generate
    assert v is not None and (v.duration, v.sources) == (5, ["a.jpg"])
    with pytest.raises(ValidationError) as err:
        Defaults.model_validate({"generate": {"prompt": "a cup", "type": "image"}})
    (d,) = err.value.errors()
    assert d["type"] == "not_supported" and "belongs to an entry" in d["msg"]


def test_scalars_are_accepted_where_a_list_is_usual() -> None:
    e = Entry.model_validate({"id": "a", "media": "a.jpg", "at": "2027-01-15 09:00"})
    assert e.media == ["a.jpg"]
    r = Repeat.model_validate(
        {"every": "week", "on": "Tuesday", "times": "9:00", "start": "2027-01-05", "count": 1}
    )
    assert (r.on, r.times) == (["tue"], ["09:00"])


@pytest.mark.parametrize(
    "ident, ok",
    [
        ("launch", True),
        ("weekly-tip_2.b", True),
        ("a" * 100, True),
        ("a" * 101, False),
        ("-x", False),
        ("a b", False),
        ("a#b", False),
        ("a@b", False),
        ("a/b", False),
    ],
)
def test_ids_can_be_part_of_a_key(ident: str, ok: bool) -> None:
    data = {"id": ident, "at": "2027-01-15 09:00"}
    if ok:
        Entry.model_validate(data)
    else:
        with pytest.raises(ValidationError):
            Entry.model_validate(data)
