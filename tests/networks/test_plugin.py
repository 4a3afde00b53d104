"""A network of another distribution (tests/support/plugin_network: `pigeon`), registered through the entry-point
group `socialpub.networks` exactly as a third-party package would be — a `.dist-info` with `entry_points.txt` on
the path of a fresh interpreter — appears in the API, the OpenAPI document, the CLI, the recipes and the TUI's
client, and takes a post in the sandbox, with no change to socialpub (issue 32)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from backend.networks import registry

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "support" / "plugin_network"

SCRIPT = r"""
import json
from click.testing import CliRunner
from fastapi.testclient import TestClient

from backend.networks import registry

names = registry.names()
assert names[-1] == "pigeon", names  # the built-ins first, then the plugins
assert not registry.get("pigeon").builtin and all(registry.get(n).builtin for n in names[:-1])

from socialpub_tui.cli.main import cli


def run(*args):
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert r.exit_code == 0, (args, r.output)
    return r.stdout


run("init", "--sandbox", "--json", "--password", "s3cret-pass")
run("admin", "plan", "GROWTH", "--status", "active", "--period-end", "2030-01-01T00:00:00Z")

# the CLI: the server's networks are its choices, the plugin's included
account = json.loads(run("accounts", "add-sandbox", "pigeon", "--name", "The loft", "--json"))
assert account["platform"] == "pigeon", account
refused = CliRunner().invoke(cli, ["accounts", "add-sandbox", "raven", "--name", "x"])
assert refused.exit_code == 2 and "pigeon" in refused.output, refused.output
listed = json.loads(run("networks", "--json"))["items"]
pigeon = [n for n in listed if n["name"] == "pigeon"][0]
assert (pigeon["badge"], pigeon["builtin"], pigeon["sandbox"]) == ("PG", False, True), pigeon
assert pigeon["options"]["properties"]["altitude"]["enum"] == ["low", "high"], pigeon

# a post to it, through the engine and the adapter, to its emulator
post = json.loads(
    run("posts", "create", "Coo from the loft", "--to", "pigeon", "--option", "pigeon.altitude=high", "--wait", "--json")
)
assert post["status"] == "completed", post
assert post["targets"][0]["postUrl"].startswith("https://pigeon.example/m/"), post
assert post["options"] == {"pigeon": {"altitude": "high"}}, post["options"]
published = json.loads(run("sandbox", "published", "--platform", "pigeon", "--json"))["items"]
assert [p["text"] for p in published] == ["Coo from the loft"], published
bad = CliRunner().invoke(cli, ["posts", "create", "x", "--to", "pigeon", "--option", "pigeon.altitude=space", "--json"])
assert bad.exit_code == 1 and "altitude" in bad.output, bad.output

# accounts doctor: the plugin's lifecycle and checks (tests/support/plugin_network/pigeon/checks.py)
doctor = CliRunner().invoke(cli, ["accounts", "doctor", "pigeon", "--json"])
assert doctor.exit_code == 1, doctor.output
diagnosis = json.loads(doctor.stdout)["networks"][0]["findings"]
assert [f["code"] for f in diagnosis] == ["pigeon_product_missing", "pigeon_unaudited"], diagnosis

# the API: GET /v1/networks and the OpenAPI document's enums and options
from backend.api.app import create_app

api = TestClient(create_app())
assert "pigeon" in [n["name"] for n in api.get("/v1/networks").json()["items"]]
doc = api.get("/openapi.json").json()
schemas = doc["components"]["schemas"]
target_names = [s for s in schemas["PostCreate"]["properties"]["targets"]["items"]["anyOf"] if s.get("type") == "string"][0]
assert "pigeon" in target_names["enum"] and "pigeon" in schemas["TargetRef"]["properties"]["platform"]["enum"]
assert schemas["PostOptions"]["properties"]["pigeon"]["anyOf"][0] == {"$ref": "#/components/schemas/PigeonOptions"}
listing = {p["name"]: p for p in doc["paths"]["/v1/posts"]["get"]["parameters"]}
assert "pigeon" in listing["platform"]["schema"]["anyOf"][0]["enum"]

# the recipes: the schema's targets and options, and a file that targets it planned and applied
schema = json.loads(run("recipes", "schema"))
found = []
def walk(node):
    if isinstance(node, dict):
        if "pigeon" in (node.get("enum") or []):
            found.append(node)
        for v in node.values():
            walk(v)
    elif isinstance(node, list):
        for v in node:
            walk(v)
walk(schema)
assert found, "no targets enum with pigeon in the recipes' schema"
assert "pigeon" in json.dumps(schema["$defs"]["Entry"]["properties"]["options"])
import pathlib, tempfile
folder = pathlib.Path(tempfile.mkdtemp()) / "loft"
folder.mkdir()
(folder / "posts.yaml").write_text(
    "timezone: UTC\nposts:\n  - {id: coo, content: Coo, targets: [pigeon], options: {pigeon: {altitude: high}},"
    " at: '2029-06-01 09:00'}\n"
)
assert json.loads(run("recipes", "validate", str(folder), "--json"))["errors"] == []
applied = json.loads(run("recipes", "apply", str(folder), "--json"))
assert applied["summary"]["created"] == 1, applied

# the TUI's client: its badge
from socialpub_tui.client import connect

with connect(worker=False) as client:
    assert client.networks().badge("pigeon") == "PG" and client.networks().label("pigeon") == "Pigeon Post"
print("PIGEON OK")
"""


def _install(site: Path) -> None:
    """The plugin's distribution metadata, as pip would write it for `socialpub-pigeon`."""
    info = site / "socialpub_pigeon-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: socialpub-pigeon\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[socialpub.networks]\npigeon = pigeon:NETWORK\n")


def test_a_plugin_network_is_a_network_everywhere(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _install(site)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(site), str(PLUGIN), str(ROOT)]),
        "SOCIALPUB_DATA_DIR": str(tmp_path / "d"),
        "SOCIALPUB_CONFIG": str(tmp_path / "cfg" / "config.yaml"),
        "SOCIALPUB_SANDBOX_DELAY_S": "0",
        "SOCIALPUB_SANDBOX_PROCESSING_S": "0",
        "SOCIALPUB_WORKER_POLL_S": "0.05",
    }
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr[-4000:] + r.stdout[-2000:]
    assert "PIGEON OK" in r.stdout


def test_without_its_distribution_the_plugin_is_nowhere() -> None:
    assert registry.find("pigeon") is None
