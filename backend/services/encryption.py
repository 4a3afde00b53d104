"""Secrets at rest, the operator's side: the key made at init, and `socialpub admin rotate-key`.

The keys and the value format live in the store (backend/store/secretbox.py, EncryptedTextField); this module
re-encrypts every stored secret under a new key.

Rotation with the key file: a new key is put first in `<data dir>/secrets.key` (the old ones stay and still
decrypt), every value is re-encrypted under it in batches (one transaction each; a row changed meanwhile by
someone else is left to the check pass), a check pass re-encrypts anything the new key alone cannot read, and
only then are the old keys dropped from the file. Interrupted anywhere, the file still holds every key a value
may be under: running it again is safe. Other processes re-read the file when it changes, but a process that
encrypted a value under an old key just before the file was rewritten and commits it after the check pass leaves
a value only a dropped key reads: run rotate-key with the server and the workers stopped (docs/api.md, Security, says so).

With SOCIALPUB_SECRETS_KEY the environment cannot be rewritten from here: the operator puts the new key first
(`NEW,OLD`) on every server, runs rotate-key (everything is re-encrypted under NEW), then removes OLD.
"""

from __future__ import annotations

from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from peewee import Table

from backend.config import Settings
from backend.store import secretbox
from backend.store.db import database, init_database, tx
from backend.store.fields import EncryptedTextField
from backend.store.models import Account, NetworkInstance, OAuthSession, TikTokPublish, WebhookEndpoint

BATCH = 500
ENCRYPTED = (
    Account,
    WebhookEndpoint,
    OAuthSession,
    NetworkInstance,
    TikTokPublish,
)  # every model with an EncryptedTextField (a test keeps this in step)


def ensure_key(settings: Settings) -> None:
    """At init: the key file (0600) exists unless SOCIALPUB_SECRETS_KEY provides the key."""
    secretbox.configure(settings).ensure()


def encrypted_columns() -> list[tuple[str, list[str]]]:
    return [
        (
            m._meta.table_name,
            [f.column_name for f in m._meta.sorted_fields if isinstance(f, EncryptedTextField)],
        )
        for m in ENCRYPTED
    ]


def _pass(table: str, column: str, ring: secretbox.Keyring, primary: Fernet, *, everything: bool) -> int:
    """Re-encrypt the column's values under the primary key, in batches of BATCH rows (one transaction each):
    every value (`everything`) or those the primary key alone cannot read. Returns how many were rewritten."""
    t = Table(table).bind(database)
    col = getattr(t.c, column)
    done, after = 0, None  # the last id of the previous batch (text ids and integer ids alike)
    while True:
        wanted = col.is_null(False) & (col != "")
        rows = list(
            t.select(t.c.id, col)
            .where(wanted if after is None else (t.c.id > after) & wanted)
            .order_by(t.c.id)
            .limit(BATCH)
            .tuples()
        )
        if not rows:
            return done
        after = rows[-1][0]
        with tx():
            for row_id, stored in rows:
                if not everything and secretbox.is_encrypted(stored):
                    try:
                        primary.decrypt(stored[len(secretbox.PREFIX) :].encode())
                        continue
                    except InvalidToken:
                        pass
                plain = secretbox.decrypt(stored) if secretbox.is_encrypted(stored) else stored
                new = secretbox.PREFIX + primary.encrypt(plain.encode()).decode()
                # compare-and-set: a value changed since it was read is left to the check pass
                done += t.update({col: new}).where((t.c.id == row_id) & (col == stored)).execute()


def rotate_key(settings: Settings) -> dict[str, Any]:
    """`socialpub admin rotate-key`: a new key (key file) or the first key of SOCIALPUB_SECRETS_KEY; every
    secret re-encrypted under it; the old keys dropped from the file."""
    ring = secretbox.configure(settings)
    if (
        not ring.from_environment and not ring.path.exists()
    ):  # never invent a key here: values may need the lost one
        raise secretbox.SecretsKeyError(
            f"no secrets key at {ring.path}: nothing to rotate (run `socialpub init` "
            "first, restore that file, or set SOCIALPUB_SECRETS_KEY)"
        )
    old = ring.keys()
    init_database(settings)
    if not ring.from_environment:
        secretbox.write_key_file(ring.path, [Fernet.generate_key(), *old])
    primary = ring.primary()
    tables: dict[str, int] = {}
    for table, columns in encrypted_columns():
        tables[table] = sum(_pass(table, c, ring, primary, everything=True) for c in columns)
    for _ in range(3):  # the check pass: values written meanwhile under an old key
        again = {
            table: sum(_pass(table, c, ring, primary, everything=False) for c in columns)
            for table, columns in encrypted_columns()
        }
        for table, n in again.items():
            tables[table] += n
        if not any(again.values()):
            break
    else:
        raise secretbox.SecretsKeyError(
            "values kept being written under an old key: the old keys are kept "
            f"in {ring.source}; run rotate-key again"
        )
    dropped = 0
    if not ring.from_environment:
        keys = ring.keys()
        secretbox.write_key_file(ring.path, keys[:1])
        dropped = len(keys) - 1
    return {
        "reencrypted": sum(tables.values()),
        "tables": tables,
        "keySource": ring.source,
        "oldKeysDropped": dropped,
    }
