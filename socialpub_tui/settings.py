"""The TUI's own settings, kept across restarts: for now the Textual theme chosen in the command palette.

They live in `tui.json` beside the CLI's `config.yaml` (the folder of `$SOCIALPUB_CONFIG`, else the platform
config dir: `~/.config/socialpub/tui.json` on Linux), a file of its own so that the TUI never rewrites the
config a person edits by hand. A missing, unreadable or malformed file means the defaults; a value the app does
not know (a theme of another Textual version) is ignored where it is applied.

`socialpub tui` reads them before the app starts (`TuiSettings.load(settings_path())`) and hands them to
`SocialpubApp(settings=…)`, which applies them and saves a change in a worker thread. Without `settings` the app
keeps nothing (tests pass a file in a temporary folder, never the user's).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from socialpub_tui.client.config import config_path


def settings_path(env: Mapping[str, str] | None = None) -> Path:
    """`tui.json` beside the config file."""
    return config_path(env).parent / "tui.json"


@dataclass
class TuiSettings:
    path: Path
    theme: str | None = None

    @classmethod
    def load(cls, path: Path) -> TuiSettings:
        """The settings kept in `path`; the defaults when it is missing, unreadable or not what we wrote. Blocking."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(path)
        theme = data.get("theme") if isinstance(data, dict) else None
        return cls(path, theme=theme if isinstance(theme, str) and theme else None)

    def save(self) -> None:
        """Write them (atomically: a crash leaves the old file or the new one). Blocking."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps({"theme": self.theme}, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)
