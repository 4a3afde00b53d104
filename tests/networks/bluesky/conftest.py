"""The Bluesky servers the suite runs against: our emulator (in process, always) and, with `--pds` or in CI, the
reference PDS + PLC (tests/networks/bluesky/pds.py starts them from .cache/pds/, installed by
.ci/ensure-pds.sh). Each gives an httpx client, the hosts (api = the PDS, plc = the directory) and a way to make
an account with an app password through the server's own XRPC calls."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig
from backend.services.adapters import sandbox_emulators


@dataclass
class Server:
    name: str
    client: httpx.Client
    hosts: dict[str, str]

    def xrpc(self, method: str, nsid: str, token: str | None = None, **kw):  # type: ignore[no-untyped-def]
        headers = {**kw.pop("headers", {}), **({"Authorization": f"Bearer {token}"} if token else {})}
        return self.client.request(method, f"{self.hosts['api']}/xrpc/{nsid}", headers=headers, **kw)

    def new_account(self) -> tuple[str, str, str, str]:
        """(handle, did, account password, app password) of a new account."""
        handle = f"u{secrets.token_hex(4)}.test"
        password = secrets.token_urlsafe(12)
        r = self.xrpc(
            "POST",
            "com.atproto.server.createAccount",
            json={"handle": handle, "email": f"{handle}@example.com", "password": password},
        )
        assert r.status_code == 200, r.text
        body = r.json()
        r2 = self.xrpc(
            "POST", "com.atproto.server.createAppPassword", body["accessJwt"], json={"name": "socialpub"}
        )
        assert r2.status_code == 200, r2.text
        return handle, body["did"], password, r2.json()["password"]


def _emulator(tmp_path: Path) -> Iterator[Server]:
    sb = Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path), emulators=sandbox_emulators(), delay_s=0, processing_s=0
        )
    )
    from backend.networks.bluesky.emulator import BlueskyEmulator

    with httpx.Client(transport=sb.transport("bluesky")) as client:
        yield Server("emulator", client, dict(BlueskyEmulator.HOSTS))


@pytest.fixture(params=["emulator", "pds"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    if request.param == "emulator":
        yield from _emulator(tmp_path)
        return
    pds = request.getfixturevalue("real_pds")
    with httpx.Client(timeout=30, trust_env=False) as client:
        yield Server("pds", client, {"api": pds.pds_url, "plc": pds.plc_url})


@pytest.fixture(scope="session")
def real_pds(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from tests.networks.bluesky.pds import running_pds

    with running_pds(tmp_path_factory.mktemp("pds")) as pds:
        yield pds
