"""No module outside a network's own package names a network (issue 32): adding a network is adding its package.

Every module of backend, socialpub_tui and recipes is read as Python (ast): its string literals (not docstrings,
which describe, and not comments) and its identifiers (names, attributes, arguments, functions, classes, imports)
must not contain a registered network's name, whatever the case. The allowlist below is the exception, one reason
per entry: the spec's TikTok-dedicated endpoints and what exists only for them, and applied history.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

from backend.networks import registry

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("backend", "socialpub_tui", "recipes")

DEDICATED = "the spec's TikTok-dedicated endpoints (spec 4.6, /v1/publish/tiktok/*)"
ALLOWLIST: dict[str, str] = {
    "backend/api/routers/tiktok.py": DEDICATED + ": their router",
    "backend/api/routers/__init__.py": DEDICATED + ": their router mounted under /v1/publish",
    "backend/schemas/tiktok.py": DEDICATED + ": their request and response bodies",
    "backend/services/tiktok.py": DEDICATED + ": their service (creator info, init, status)",
    "backend/jobs/tiktok.py": DEDICATED + ": their jobs (chunked upload, tracking)",
    "backend/jobs/registry.py": DEDICATED + ": their job module registered",
    "backend/store/models/tiktok.py": DEDICATED + ": their table (TikTokPublish)",
    "backend/store/models/__init__.py": DEDICATED + ": their table exported with the others",
    "backend/services/encryption.py": DEDICATED + ": their table's token encrypted at rest like the others",
    "backend/services/scopes.py": DEDICATED + ": the scope `publish:tiktok` that guards them (spec 5.4)",
    "backend/schemas/keys.py": DEDICATED + ": the scope `publish:tiktok` a key may hold (spec 5.4)",
    "backend/schemas/webhooks.py": DEDICATED + ": their webhook events `tiktok.publish.*`",
    "socialpub_tui/cli/tiktok.py": DEDICATED + ": `socialpub tiktok`, their CLI",
    "socialpub_tui/cli/main.py": DEDICATED + ": `socialpub tiktok` registered",
    "socialpub_tui/cli/keys.py": DEDICATED + ": the scope `publish:tiktok` offered by `keys create`",
    "socialpub_tui/cli/webhooks.py": DEDICATED + ": their events `tiktok.publish.*` summarised",
    "socialpub_tui/client/calls.py": DEDICATED + ": the client's calls of them",
    "socialpub_tui/client/endpoints.py": DEDICATED + ": the client's methods for them",
    "backend/api/app.py": DEDICATED
    + ": their operations' rules no schema states (UNSTATED_RULES, by operation id)",
    "backend/store/migrations/*": "applied history: a migration is never edited once released",
    "backend/generation/local/*": "x264's `threads` (the encoder's OS threads, SOCIALPUB_GENERATION_LOCAL_THREADS, "
    "a documented setting): the word, not the Threads network",
    "backend/jobs/worker.py": "the worker's pool of OS threads (its variables and log lines): the word, not the "
    "Threads network",
    "socialpub_tui/cli/network_flags.py": "the named option flags `posts create/edit` documented before networks "
    "were packages (docs/cli.md), kept as shorthands of the generic `--option NETWORK.KEY=VALUE`",
}


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    out.add(id(body[0].value))
    return out


def _words(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    return []


def naming(path: Path, pattern: re.Pattern[str]) -> list[str]:
    """Where the module names a network: `line: what`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        texts = _words(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            texts = [node.value]
        for text in texts:
            m = pattern.search(text)
            if m:
                found.append(f"{getattr(node, 'lineno', 0)}: {m.group(0)!r} in {text[:60]!r}")
    return found


def allowed(rel: str) -> bool:
    return any(fnmatch.fnmatch(rel, pattern) for pattern in ALLOWLIST)


def test_no_module_outside_a_networks_package_names_a_network() -> None:
    names = [n.name for n in registry.networks() if n.builtin]
    assert names, "no built-in network registered: reinstall (make setup)"
    pattern = re.compile("|".join(re.escape(n) for n in names), re.IGNORECASE)
    own = [ROOT / "backend" / "networks" / n for n in names]
    offenders: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if any(path.is_relative_to(d) for d in own) or allowed(rel):
                continue
            found = naming(path, pattern)
            if found:
                offenders[rel] = found
    assert not offenders, "\n".join(f"{rel}:{line}" for rel, lines in offenders.items() for line in lines)


def test_every_allowlist_entry_is_still_needed_and_has_a_reason() -> None:
    names = [n.name for n in registry.networks() if n.builtin]
    pattern = re.compile("|".join(re.escape(n) for n in names), re.IGNORECASE)
    for entry, reason in ALLOWLIST.items():
        assert len(reason) > 20, entry
        paths = [p for p in ROOT.glob(entry) if p.suffix == ".py"]
        assert paths, f"{entry} matches no module: drop it from the allowlist"
        assert any(naming(p, pattern) for p in paths), f"{entry} names no network any more: drop it"


def test_the_walk_finds_a_network_name() -> None:
    """The walk itself works: the adapter of a network names it (a string and an identifier)."""
    pattern = re.compile("tiktok", re.IGNORECASE)
    found = naming(ROOT / "backend" / "networks" / "tiktok" / "adapter.py", pattern)
    assert found
