"""`make run` and `make serve`: initialise a data dir in the project if there is none; `make serve` then
prints how to reach it and serves the API (`make run` opens the TUI on it: `--prepare-only` here).

The data dir is ./.socialpub unless SOCIALPUB_DATA_DIR says otherwise. On first run it creates the
workspace, an owner login, an API key and one sandbox account per network, and keeps the key in
<data dir>/dev-credentials.json (mode 0600) so later runs can print it again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from backend import clock
from backend.operator import runtime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make run")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--prepare-only",
        action="store_true",
        help="initialise the data dir if needed, then exit (what `make run` does before the TUI)",
    )
    args = parser.parse_args(argv)

    # deferred: backend.config costs ~151 ms of start-up, paid only by the commands that use it
    from backend.config import Settings

    # deferred: backend.services.bootstrap costs ~408 ms of start-up, paid only by the commands that use it
    from backend.services import bootstrap

    settings, warning = runtime.listening_settings(Settings(), args.host, args.port)
    creds_path = Path(settings.data_dir) / "dev-credentials.json"
    if not bootstrap.is_initialised(settings):
        # deferred: backend.services.workspace costs ~263 ms of start-up, paid only by the commands that use it
        from backend.services.workspace import PLACEHOLDER_NAMES

        created = bootstrap.initialise(
            settings,
            workspace_name=PLACEHOLDER_NAMES[
                1
            ],  # "Local workspace": not a brand (the renderer leaves it out)
            email="owner@localhost",
            password=None,
        )
        info = created.public()
        # deferred: backend.services.accounts costs ~355 ms of start-up, paid only by the commands that use it
        from backend.services import accounts as accounts_service

        info["accounts"] = accounts_service.connect_sandbox_defaults(settings, created.workspace_id)
        # A local sandbox workspace is for trying things: it gets the GROWTH plan for a year (the FREE plan stops
        # after three publications, spec 7), so the tour in the README works; `socialpub admin plan FREE` undoes it.
        from datetime import timedelta

        # deferred: backend.services.workspace costs ~233 ms of start-up, paid only by the commands that use it
        from backend.services import workspace as workspace_service

        workspace_service.set_plan(
            created.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=365)
        )
        info["plan"] = "GROWTH"
        fd = os.open(creds_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(info, fh, indent=2)
        print(f"initialised a new data dir in {settings.data_dir}")
    if args.prepare_only:
        return 0
    info = json.loads(creds_path.read_text()) if creds_path.exists() else {}

    base = settings.base_url
    print("")
    if warning:
        print(f"  warning    {warning}")
    print(f"  API        {base}/v1")
    print(f"  docs       {base}/docs")
    print(f"  API key    {info.get('apiKey', '(created before; see socialpub keys create)')}")
    if info.get("email"):
        print(f"  login      {info['email']}  password {info.get('password', '(as set at init)')}")
    print(f"  data dir   {settings.data_dir}")
    print("")
    print(f"  try:  curl -s -H 'x-api-key: {info.get('apiKey', '<key>')}' {base}/v1/workspace")
    print("")
    sys.stdout.flush()

    runtime.serve_app(
        runtime.build_app(settings),
        settings,
        host=args.host,
        port=args.port,
        worker=settings.serve_worker,
        log_level="info",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
