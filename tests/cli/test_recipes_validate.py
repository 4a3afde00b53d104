"""`socialpub recipes validate` and `socialpub recipes schema`: files only, no backend."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.cli.conftest import invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "recipes" / "examples"


@pytest.fixture(autouse=True)
def no_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No config, no profile, and a client that cannot be made: validate must not need one."""
    monkeypatch.setenv("SOCIALPUB_CONFIG", str(tmp_path / "cfg" / "config.yaml"))
    for name in ("SOCIALPUB_PROFILE", "SOCIALPUB_API_URL", "SOCIALPUB_API_KEY", "TZ"):
        monkeypatch.delenv(name, raising=False)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("validate must not connect to a backend")

    monkeypatch.setattr("socialpub_tui.client.connect", refuse)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


GOOD = (
    "timezone: Europe/Paris\nposts:\n  - {id: a, content: hi, targets: [facebook], at: '2027-01-15 09:00'}\n"
)
BAD = "posts:\n  - id: a\n    content: '{nope}'\n    targets: [facebok]\n    at: '2027-01-15 09:00'\n"


def test_the_examples_are_valid() -> None:
    r = invoke("recipes", "validate", str(EXAMPLES))
    assert r.code == 0, r.out
    assert r.out.strip().splitlines()[-1] == "3 files, 22 occurrences (set examples): valid"


def test_examples_as_json() -> None:
    r = invoke("recipes", "validate", str(EXAMPLES), "--json")
    assert r.code == 0
    assert r.json() == {
        "files": ["launch.yaml", "videos.yaml", "weekly.yaml"],
        "occurrences": 22,
        "errors": [],
    }


def test_errors_human_lines_and_exit_1(tmp_path: Path) -> None:
    write(tmp_path / "set", "ok.yaml", GOOD)
    write(tmp_path / "set", "sub/bad.yaml", BAD)
    r = invoke("recipes", "validate", str(tmp_path / "set"))
    assert r.code == 1
    lines = r.out.strip().splitlines()
    assert lines[0].startswith("sub/bad.yaml:3:14: posts[0].content: unknown variable {nope}")
    assert lines[1].startswith("sub/bad.yaml:4:15: posts[0].targets[0]: expected 'bluesky', 'facebook'")
    assert lines[2] == "2 files, 1 occurrence: 2 errors in 1 file"


def test_errors_as_json(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", BAD)
    r = invoke("recipes", "validate", str(path), "--json")
    assert r.code == 1
    body = r.json()
    assert set(body) == {"files", "occurrences", "errors"}
    assert body["files"] == [str(path)] and body["occurrences"] == 0
    assert [set(e) for e in body["errors"]] == [{"file", "line", "column", "message", "code"}] * 2
    assert [(e["file"], e["line"], e["column"], e["code"]) for e in body["errors"]] == [
        (str(path), 3, 14, "unknown_variable"),
        (str(path), 4, 15, "invalid_recipe"),
    ]


def test_invalid_yaml_exit_1(tmp_path: Path) -> None:
    path = write(tmp_path, "x.yml", "posts: [\n")
    r = invoke("recipes", "validate", str(path), "--json")
    assert r.code == 1
    (err,) = r.json()["errors"]
    assert (err["line"], err["column"], err["code"]) == (2, 1, "invalid_yaml")


def test_set_name_and_usage_errors(tmp_path: Path) -> None:
    write(tmp_path / "brand", "a.yaml", GOOD)
    r = invoke("recipes", "validate", str(tmp_path / "brand"), "--set", "spring")
    assert r.code == 0 and "(set spring)" in r.out
    assert invoke("recipes", "validate", str(tmp_path / "brand"), "--set", "a/b").code == 2
    assert invoke("recipes", "validate", str(tmp_path / "nowhere")).code == 2


@pytest.mark.parametrize("command", ["validate", "plan", "apply", "watch"])
def test_a_folder_whose_name_cannot_be_a_set_name_is_a_usage_error_saying_to_pass_set(
    tmp_path: Path, command: str
) -> None:
    write(tmp_path / "q1@2027", "a.yaml", GOOD)  # the set's name would be the folder's: '@' cannot be in it
    r = invoke("recipes", command, str(tmp_path / "q1@2027"), "--json")
    assert r.code == 2, r.err
    assert json.loads(r.err)["error"] == "usage_error" and "--set NAME" in r.err and "Traceback" not in r.err
    assert invoke("recipes", "validate", str(tmp_path / "q1@2027"), "--set", "q1-2027").code == 0


def test_a_folder_without_recipe_files_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    r = invoke("recipes", "validate", str(tmp_path / "empty"), "--json")
    assert r.code == 1
    assert r.json()["errors"][0]["code"] == "no_recipe_files"


def test_files_without_timezone_use_the_profile_zone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from recipes import load as load_module

    seen: list[str | None] = []
    real = load_module.load

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(kwargs.get("default_zone"))
        return real(*args, **kwargs)

    monkeypatch.setattr(load_module, "load", spy)
    write(tmp_path, "a.yaml", GOOD.replace("timezone: Europe/Paris\n", ""))
    config = write(
        tmp_path / "cfg",
        "config.yaml",
        "default: work\nprofiles:\n  work:\n    url: http://127.0.0.1:9\n    timezone: America/New_York\n",
    )
    assert invoke("recipes", "validate", str(tmp_path / "a.yaml")).code == 0
    config.write_text("timezone: Mars/Olympus\n")
    assert invoke("recipes", "validate", str(tmp_path / "a.yaml")).code == 2  # a bad configured zone: usage
    config.unlink()
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert invoke("recipes", "validate", str(tmp_path / "a.yaml")).code == 0
    assert seen == ["America/New_York", "Asia/Tokyo"]


def test_schema_prints_a_json_schema_with_an_id() -> None:
    r = invoke("recipes", "schema")
    assert r.code == 0
    schema = json.loads(r.out)
    assert schema["$id"] == "https://socialpub.dev/schemas/recipe.json"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert invoke("recipes", "schema", "--json").json() == schema


def test_a_jpg_that_is_really_text_is_an_error_at_its_yaml_line(tmp_path: Path) -> None:
    """Issue 33: validate passed it and only apply failed, with no YAML line. The content is read from the file's
    first bytes, as the backend reads it."""
    from tests.media import corpus

    folder = tmp_path / "set"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "fake.jpg").write_text("this is text\n")
    (folder / "images" / "real.jpg").write_bytes(corpus.jpeg())
    write(
        folder,
        "a.yaml",
        "timezone: UTC\nposts:\n  - id: a\n    content: hi\n    targets: [facebook]\n"
        "    at: '2030-01-15 09:00'\n    media: [images/real.jpg, images/fake.jpg]\n",
    )
    r = invoke("recipes", "validate", str(folder), "--json")
    assert r.code == 1
    (error,) = r.json()["errors"]
    assert (error["file"], error["line"], error["code"]) == ("a.yaml", 7, "unsupported_media_type"), error
    assert "'fake.jpg' is not what its name says" in error["message"]
    (folder / "images" / "fake.jpg").write_bytes(corpus.jpeg())  # fixed in place: valid at once
    assert invoke("recipes", "validate", str(folder)).code == 0
