"""Media keys are capabilities (issue 30 item 0): the media host serves `/media/{key}` without credentials, so no key
may be derivable from another. Before, keys were ULIDs made monotonic inside one process: two workspaces uploading
at once got keys one apart, and B's file was fetched as A's key + 1."""

from __future__ import annotations

import base64
import re
import threading
from typing import Any

import httpx

from tests.conftest import key_headers, make_owner
from tests.media import corpus
from tests.support.live import served

KEY = re.compile(r"^med_(?P<id>[0-9a-z]{26})_(?P<token>[a-z2-7]{26})\.(?P<ext>[a-z0-9]+)$")
_ULID = "0123456789abcdefghjkmnpqrstvwxyz"


def _token_int(token: str) -> int:
    return int.from_bytes(base64.b32decode(token.upper() + "======"), "big")


def _token_str(value: int) -> str:
    return base64.b32encode(value.to_bytes(16, "big")).decode().rstrip("=").lower()


def _id_int(ulid: str) -> int:
    n = 0
    for ch in ulid:
        n = n * 32 + _ULID.index(ch)
    return n


def _id_str(value: int) -> str:
    return "".join(_ULID[(value >> (5 * (25 - i))) & 31] for i in range(26))


def _tokens(keys: list[str]) -> list[int]:
    return [_token_int(m["token"]) for m in map(KEY.match, keys) if m]


def _neighbours(key: str) -> set[str]:
    """What an attacker holding `key` would try: the id ± a few (with the key's own token), the token ± a few."""
    m = KEY.match(key)
    assert m
    ident, token, ext = _id_int(m["id"]), _token_int(m["token"]), m["ext"]
    out = set()
    for d in range(-3, 4):
        if d:
            out.add(f"med_{_id_str(ident + d)}_{m['token']}.{ext}")
            out.add(f"med_{m['id']}_{_token_str((token + d) % (1 << 128))}.{ext}")
    return out


def test_two_workspaces_uploading_at_once_get_unrelated_keys(settings):
    """Two workspaces upload concurrently through the served API (threads): every key carries its own 128 random
    bits, the random parts are pairwise far apart and look independent (about half their bits differ), and no key
    near another workspace's (its id ± 3, its random part ± 3) serves anything."""
    settings.rate_limit_per_minute = 100_000
    from backend.api.app import create_app

    a = make_owner(settings, "A", "a@test.local")
    b = make_owner(settings, "B", "b@test.local")
    body = {"base64": base64.b64encode(corpus.video("mp4")).decode()}
    keys: dict[str, list[str]] = {a.workspace_id: [], b.workspace_id: []}
    errors: list[Any] = []

    with served(create_app(settings)) as port:
        base = f"http://127.0.0.1:{port}"

        def upload(owner: Any, n: int) -> None:
            with httpx.Client(base_url=base, timeout=30) as http:
                for _ in range(n):
                    r = http.post("/v1/media", json=body, headers=key_headers(owner.api_key))
                    if r.status_code != 201:
                        errors.append(r.text)
                        return
                    keys[owner.workspace_id].append(r.json()["key"])

        threads = [threading.Thread(target=upload, args=(o, 40)) for o in (a, b, a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert errors == []
        mine, theirs = keys[a.workspace_id], keys[b.workspace_id]
        assert len(mine) == len(theirs) == 80
        every = mine + theirs
        assert all(KEY.match(k) for k in every), every[:3]
        tokens = _tokens(every)
        assert len(set(tokens)) == len(tokens)
        assert all(abs(x - y) > 1 << 64 for x in _tokens(mine) for y in _tokens(theirs))
        in_order = _tokens(sorted(every))  # by id: the order they were made in
        flips = [bin(x ^ y).count("1") for x, y in zip(in_order, in_order[1:], strict=False)]
        assert 48 < sum(flips) / len(flips) < 80  # independent 128-bit draws differ in ~64 bits
        with httpx.Client(base_url=base, timeout=30) as http:
            assert http.get(f"/media/{theirs[0]}").status_code == 200  # served without credentials
            probes = set().union(*(_neighbours(k) for k in mine)) - set(every)
            assert probes
            served_ = [p for p in probes if http.head(f"/media/{p}").status_code != 404]
        assert served_ == []
