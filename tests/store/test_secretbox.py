"""Secrets at rest (issue 17): EncryptedTextField stores `enc:v1:` + a Fernet token under the store's keyring;
the key file (0600) or SOCIALPUB_SECRETS_KEY; a replaced key file is noticed; migration 0020 encrypts what was
in clear and its `down` decrypts it back."""

from __future__ import annotations

import os

import pytest
from cryptography.fernet import Fernet, MultiFernet
from peewee import CharField, Model, Table
from playhouse.migrations import Runner

from backend.config import Settings
from backend.store import secretbox
from backend.store.db import MIGRATIONS_DIR, database
from backend.store.fields import EncryptedTextField
from backend.store.models import Account, WebhookEndpoint

TOKEN = "EAAB-plain-access-token-0123456789"


class Vault(Model):
    name = CharField(primary_key=True)
    secret = EncryptedTextField(null=True)

    class Meta:
        database = database
        table_name = "vault_test"


@pytest.fixture
def vault(settings):  # type: ignore[no-untyped-def]
    Vault.create_table()
    yield Vault
    Vault.drop_table()


def _raw(table: str, column: str, row_id: str):  # type: ignore[no-untyped-def]
    t = Table(table).bind(database)
    key = t.c.name if table == "vault_test" else t.c.id
    return t.select(getattr(t.c, column)).where(key == row_id).tuples().get()[0]


def test_round_trip_and_nothing_in_clear(vault):
    Vault.create(name="a", secret=TOKEN)
    Vault.create(name="b", secret=TOKEN)
    Vault.create(name="none", secret=None)
    Vault.create(name="empty", secret="")
    a, b = _raw("vault_test", "secret", "a"), _raw("vault_test", "secret", "b")
    assert a.startswith("enc:v1:") and TOKEN not in a
    assert a != b  # not deterministic: equal secrets are not recognisable as equal
    assert Vault.get_by_id("a").secret == TOKEN == Vault.get_by_id("b").secret
    assert _raw("vault_test", "secret", "none") is None and Vault.get_by_id("none").secret is None
    assert _raw("vault_test", "secret", "empty") == "" and Vault.get_by_id("empty").secret == ""
    # the same through a joined/projected select and an update
    Vault.update(secret="rotated-value").where(Vault.name == "a").execute()
    assert [r.secret for r in Vault.select(Vault.secret).where(Vault.name == "a")] == ["rotated-value"]
    assert "rotated-value" not in _raw("vault_test", "secret", "a")


def test_key_file_is_made_private_at_init(settings, owner):
    path = secretbox.key_path(settings)
    assert path.exists() and os.stat(path).st_mode & 0o077 == 0
    keys = path.read_text().split()
    assert len(keys) == 1 and Fernet(keys[0].encode())


def test_key_file_is_made_only_by_ensure(tmp_path):
    ring = secretbox.Keyring(env_keys=None, path=tmp_path / "d" / "secrets.key")
    with pytest.raises(secretbox.SecretsKeyError, match="no secrets key"):
        ring.decrypt("enc:v1:whatever")  # reading never invents a key
    with pytest.raises(secretbox.SecretsKeyError, match="no secrets key"):
        ring.encrypt(TOKEN)  # nor does writing
    assert not ring.path.exists()
    ring.ensure()  # init
    assert ring.path.exists() and os.stat(ring.path).st_mode & 0o077 == 0
    assert ring.decrypt(ring.encrypt(TOKEN)) == TOKEN


def test_a_lost_key_file_is_never_replaced_by_a_write(settings, vault):  # type: ignore[no-untyped-def]
    """A key file lost while values exist under it (a restore without it, a cleaned data dir): the next write
    (a worker's token refresh, a webhook secret) refuses, saying what to restore, instead of writing under a new
    key that the restored one could not read."""
    ring = secretbox.keyring()
    vault.create(name="a", secret="tiktok-refresh-token-1")
    original = ring.path.read_bytes()
    ring.path.unlink()
    with pytest.raises(secretbox.SecretsKeyError, match="restore that file"):
        vault.create(name="b", secret="tiktok-refresh-token-2")
    assert not ring.path.exists()
    ring.path.write_bytes(original)  # restored
    os.chmod(ring.path, 0o600)
    vault.create(name="b", secret="tiktok-refresh-token-2")
    assert vault.get_by_id("a").secret == "tiktok-refresh-token-1"
    assert vault.get_by_id("b").secret == "tiktok-refresh-token-2"


def test_environment_key_is_used_and_never_shown(tmp_path):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings = Settings(data_dir=tmp_path / "d", secrets_key=f"{old}")
    assert old not in repr(settings)
    ring = secretbox.Keyring(env_keys=settings.secrets_key, path=secretbox.key_path(settings))
    stored = ring.encrypt(TOKEN)
    assert not secretbox.key_path(settings).exists()  # no key file when the environment provides the key
    both = secretbox.Keyring(
        env_keys=f"{new},{old}", path=ring.path
    )  # a rotation: NEW first, OLD still reads
    assert both.decrypt(stored) == TOKEN
    assert Fernet(new.encode()).decrypt(both.encrypt(TOKEN)[len("enc:v1:") :].encode()).decode() == TOKEN
    with pytest.raises(secretbox.SecretsKeyError) as exc:
        secretbox.Keyring(env_keys="not-a-key-value", path=ring.path).encrypt(TOKEN)
    assert "not-a-key-value" not in str(exc.value) and "SOCIALPUB_SECRETS_KEY" in str(exc.value)


def test_wrong_key_fails_loudly_and_a_replaced_file_is_noticed(tmp_path):
    path = tmp_path / "secrets.key"
    ring = secretbox.Keyring(env_keys=None, path=path)
    ring.ensure()
    stored = ring.encrypt(TOKEN)
    other = secretbox.Keyring(env_keys=Fernet.generate_key().decode(), path=path)
    with pytest.raises(secretbox.SecretsKeyError, match="cannot be decrypted") as exc:
        other.decrypt(stored)
    assert TOKEN not in str(exc.value)
    # another process rotates: a new key first in the file; this process reads the new values and writes
    # under the new key (it re-reads the replaced file)
    new = Fernet.generate_key()
    secretbox.write_key_file(path, [new, *[k.encode() for k in path.read_text().split()]])
    rotated = secretbox.PREFIX + Fernet(new).encrypt(b"fresh").decode()
    assert ring.decrypt(rotated) == "fresh"
    assert Fernet(new).decrypt(ring.encrypt(TOKEN)[len(secretbox.PREFIX) :].encode()).decode() == TOKEN
    assert os.stat(path).st_mode & 0o077 == 0


def test_a_stored_value_is_decrypted_once_under_the_keys_in_force(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """Issue 34: an account's tokens are read on every load of its row; each stored value costs Fernet once per
    process and keys, and keys read anew (a rotation that dropped the old key) decrypt it again."""
    path = tmp_path / "secrets.key"
    ring = secretbox.Keyring(env_keys=None, path=path)
    ring.ensure()
    stored, other = ring.encrypt(TOKEN), ring.encrypt("second")
    calls: list[bytes] = []
    decrypt = MultiFernet.decrypt

    def counted(self: MultiFernet, token: bytes, ttl: int | None = None) -> bytes:
        calls.append(token)
        return decrypt(self, token, ttl)

    monkeypatch.setattr(MultiFernet, "decrypt", counted)
    monkeypatch.setattr(secretbox, "PLAIN_CACHE", 2)
    assert [ring.decrypt(stored) for _ in range(3)] == [TOKEN] * 3 and len(calls) == 1
    assert [ring.decrypt(other) for _ in range(2)] == ["second"] * 2 and len(calls) == 2
    assert ring.decrypt(stored) == TOKEN and len(calls) == 2
    # bounded: past PLAIN_CACHE values the oldest is dropped, and decrypted again when read
    third = ring.encrypt("third")
    assert ring.decrypt(third) == "third" and len(calls) == 3
    assert ring.decrypt(other) == "second" and len(calls) == 3
    assert ring.decrypt(stored) == TOKEN and len(calls) == 4
    # another process rotated and dropped the old key: a value only the old key reads fails as before
    new = Fernet.generate_key()
    secretbox.write_key_file(path, [new])
    fresh = secretbox.PREFIX + Fernet(new).encrypt(b"fresh").decode()
    assert ring.decrypt(fresh) == "fresh"  # unknown to the old key: the file is read anew
    with pytest.raises(secretbox.SecretsKeyError, match="cannot be decrypted"):
        ring.decrypt(other)


def test_models_keep_secrets_out_of_repr(settings, owner):
    from backend.services import accounts

    acc = accounts.connect_sandbox(settings, owner.workspace_id, "facebook", "Page")
    acc = Account.get_by_id(acc.id)
    assert acc.access_token and acc.access_token not in repr(acc) and acc.access_token not in str(acc)
    ep = WebhookEndpoint(
        id="we_x", url="https://example.com/h", secret="whsec_abc", previous_secret="whsec_old"
    )
    assert "whsec_" not in repr(ep) and "whsec_" not in str(ep)


def test_migration_0020_encrypts_in_place_and_down_decrypts(settings, owner):
    from backend import clock
    from backend.services import accounts

    acc = accounts.connect_sandbox(settings, owner.workspace_id, "linkedin", "Org")
    token = Account.get_by_id(acc.id).access_token
    now = clock.now()
    WebhookEndpoint.create(
        id="we_m",
        workspace=owner.workspace_id,
        url="https://example.com/h",
        secret="whsec_current",
        previous_secret="whsec_before",
        created_at=now,
        updated_at=now,
    )
    Account.update(refresh_token="refresh-1").where(Account.id == acc.id).execute()

    runner = Runner(database.obj, directory=str(MIGRATIONS_DIR), table_name="schema_migration")
    after = sorted(
        (p.stem for p in MIGRATIONS_DIR.glob("0*.py") if p.stem > "0020_secrets_at_rest"), reverse=True
    )
    assert runner.down("0020_secrets_at_rest") == [*after, "0020_secrets_at_rest"]
    assert "refresh_token" not in {c.name for c in database.get_columns("account")}
    assert _raw("account", "access_token", acc.id) == token  # back in clear for the code before 0020
    assert _raw("webhook_endpoint", "secret", "we_m") == "whsec_current"
    assert _raw("webhook_endpoint", "previous_secret", "we_m") == "whsec_before"
    # a disconnected account's empty token stays empty
    empty = accounts.connect_sandbox(settings, owner.workspace_id, "youtube", "Chan")
    Table("account").bind(database).update(access_token="").where(Table("account").c.id == empty.id).execute()

    assert runner.up() == ["0020_secrets_at_rest", *reversed(after)]
    for table, column, row_id, plain in (
        ("account", "access_token", acc.id, token),
        ("webhook_endpoint", "secret", "we_m", "whsec_current"),
        ("webhook_endpoint", "previous_secret", "we_m", "whsec_before"),
    ):
        stored = _raw(table, column, row_id)
        assert stored.startswith("enc:v1:") and plain not in stored
    assert _raw("account", "access_token", empty.id) == ""
    got = Account.get_by_id(acc.id)
    assert got.access_token == token and got.refresh_token is None
    ep = WebhookEndpoint.get_by_id("we_m")
    assert (ep.secret, ep.previous_secret) == ("whsec_current", "whsec_before")
    assert runner.up() == []


def test_rotation_covers_every_encrypted_field():
    from backend.services import encryption
    from backend.store import models

    having = {
        getattr(models, name)
        for name in models.__all__
        if any(isinstance(f, EncryptedTextField) for f in getattr(models, name)._meta.sorted_fields)
    }
    assert having == set(encryption.ENCRYPTED)
    assert dict(encryption.encrypted_columns()) == {
        "account": ["access_token", "refresh_token"],
        "webhook_endpoint": ["secret", "previous_secret"],
        "oauth_session": ["verifier", "tokens"],
        "network_instance": ["client_secret"],
        "tiktok_publish": ["upload_url"],
    }
