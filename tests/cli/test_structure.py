"""Every command documented with an example; front-end packages never load the store; fast --help; completion."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from socialpub_tui.cli.main import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]


def walk(group: click.Group, ctx: click.Context, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None, name
        path = f"{prefix} {name}".strip()
        out.append((path, cmd))
        if isinstance(cmd, click.Group):
            out += walk(cmd, click.Context(cmd, parent=ctx, info_name=name), path)
    return out


def test_every_command_has_help_with_an_example() -> None:
    ctx = click.Context(cli, info_name="socialpub")
    commands = walk(cli, ctx)
    assert len(commands) > 30
    missing = []
    for path, cmd in commands:
        text = cmd.help or ""
        if "Example" not in text or "socialpub" not in text.split("Example", 1)[1]:
            missing.append(path)
        if not isinstance(cmd, click.Group):
            sub = click.Context(cmd, info_name=path)
            assert cmd.get_short_help_str(), path
            assert "--help" in cmd.get_help(sub), path
    assert not missing, f"commands without an example in their help: {missing}"


def test_client_commands_all_have_json() -> None:
    ctx = click.Context(cli, info_name="socialpub")
    exempt = {
        "serve",
        "worker",
        "completion",
        "admin session",
        "tui",
    }  # tui: a full-screen app, nothing to print
    lacking = [
        path
        for path, cmd in walk(cli, ctx)
        if not isinstance(cmd, click.Group)
        and path not in exempt
        and not any("--json" in p.opts for p in cmd.params)
    ]
    assert not lacking, lacking


def test_root_help_lists_every_command_without_importing_them() -> None:
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom socialpub_tui.cli.main import cli\n"
        "r = CliRunner().invoke(cli, ['--help'])\nassert r.exit_code == 0\nprint(r.output)\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith(('socialpub_tui.cli.', 'httpx', "
        "'pydantic', 'backend', 'fastapi'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    for name in COMMANDS:
        assert name in out
    loaded = out.rsplit("LOADED", 1)[1]
    assert loaded.strip() == "['socialpub_tui.cli.main']", loaded


def test_front_end_never_loads_the_store() -> None:
    """Importing the client, every CLI command module (except operator commands) and using the client
    over a mock transport must not load peewee, the store, the services or the API app."""
    modules = sorted({m for m, _, _ in COMMANDS.values() if not m.startswith("backend.operator")})
    code = "\n".join(
        [
            "import sys, httpx",
            *[f"import {m}" for m in modules],
            "import socialpub_tui.client as c, socialpub_tui.client.sync, socialpub_tui.client.aio",
            "import socialpub_tui.client.calls, socialpub_tui.client.config",
            "from socialpub_tui.cli.main import cli",
            "from click import Context",
            "ctx = Context(cli)",
            "[cli.get_command(ctx, n) for n in cli.list_commands(ctx) if n not in ('init','serve','worker','tick','admin')]",
            "cl = c.Client('http://x', api_key='k', transport=httpx.MockTransport(lambda r: httpx.Response(200, json={'items': [], 'nextCursor': None})))",
            "list(cl.iter_posts())",
            "bad = sorted(m for m in sys.modules if m == 'peewee' or m.startswith(('backend.store', 'backend.services', "
            "'backend.api', 'backend.jobs', 'fastapi', 'socialpub_tui.client.embedded')))",
            "print(bad)",
        ]
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout


def test_operator_commands_are_the_backend_group_mounted() -> None:
    """`init`, `serve`, `worker`, `tick`, `admin` are the commands of backend.operator's click group (the backend
    owns them), mounted under the same names, with the same one-line help as `socialpub --help` lists."""
    from backend.operator.cli import operator_cli
    from socialpub_tui.cli.main import OPERATOR_GROUP

    mounted = {name for name, (module, _, _) in COMMANDS.items() if module == OPERATOR_GROUP[0]}
    assert mounted == set(operator_cli.commands) == {"init", "serve", "worker", "tick", "admin"}
    ctx = click.Context(cli, info_name="socialpub")
    for name in mounted:
        assert cli.get_command(ctx, name) is operator_cli.commands[name]
    assert not any(m.startswith("socialpub_tui") for m, _, _ in COMMANDS.values() if m.startswith("backend"))


def test_help_loads_neither_store_nor_services() -> None:
    """`socialpub --help` as a user runs it (the console script's module, a fresh interpreter) loads neither
    backend.store nor backend.services (nor the app, the worker or peewee)."""
    code = (
        "import sys\nfrom socialpub_tui.cli.main import main\nsys.argv = ['socialpub', '--help']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "print('LOADED', sorted(m for m in sys.modules if m == 'peewee' or m.startswith(("
        "'backend.store', 'backend.services', 'backend.api', 'backend.jobs', 'backend.networks'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "Commands:" in r.stdout
    assert r.stdout.rsplit("LOADED", 1)[1].strip() == "[]"


def test_embedded_module_is_the_one_that_loads_the_backend() -> None:
    code = (
        "import sys\nimport socialpub_tui.client.embedded as e\ne.start\nfrom backend.api.app import create_app\n"
        "print('peewee' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.stdout.strip() == "True"


def test_shell_completion_completes_commands() -> None:
    exe = Path(sys.executable).with_name("socialpub")
    env = dict(os.environ, _SOCIALPUB_COMPLETE="bash_complete", COMP_WORDS="socialpub po", COMP_CWORD="1")
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert "plain,posts" in r.stdout
    env.update(COMP_WORDS="socialpub posts cr", COMP_CWORD="2")
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert "plain,create" in r.stdout


def test_front_end_layer_contracts_hold() -> None:
    """pyproject.toml's import-linter contracts for the front end: it imports only the schemas and
    backend.operator, and the client reaches the store only through backend.operator.embedded."""
    import shutil

    exe = Path(sys.executable).with_name("lint-imports")
    assert exe.exists() or shutil.which("lint-imports"), (
        "import-linter is a dev dependency: pip install -e '.[dev]'"
    )
    r = subprocess.run(
        [
            str(exe) if exe.exists() else "lint-imports",
            "--no-cache",
            "--contract",
            "front-end-speaks-v1",
            "--contract",
            "client-knows-no-store",
            "--contract",
            "backend-knows-no-front-end",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 kept, 0 broken" in r.stdout
