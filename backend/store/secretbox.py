"""Secrets at rest (issue 17): the key that encrypts network tokens and webhook signing secrets in the store.

Values are Fernet tokens (cryptography's AES-128-CBC + HMAC-SHA256, authenticated) behind the prefix
`enc:v1:`, so that plaintext left by an older version is recognisable (migration 0020 encrypts it). The keys
come from SOCIALPUB_SECRETS_KEY (comma-separated Fernet keys, the first encrypts: several servers share it) or
else from `<data dir>/secrets.key` (one key a line, the first encrypts; mode 0600; made at init or on first
need). Every key listed decrypts (cryptography's MultiFernet), so `socialpub admin rotate-key` can put a new
key first, re-encrypt every value, and only then drop the old one; an interrupted rotation leaves both.

A process reading the key file notices when it was replaced (another process rotated): it re-reads it before
encrypting, and when a stored value matches none of its keys.

A stored value is decrypted once per process and keys in force (issue 34: an account's tokens are read on every
load of its row, several times a target, and Fernet costs ~100 µs a value): the keyring keeps a bounded map from a
stored value to its plain text (at most `PLAIN_CACHE` values, the oldest dropped first), emptied whenever its keys
are read anew. Only in this process's memory, where the plain text goes anyway; never logged or written.

`init_database` configures the one keyring from the settings; the store's `EncryptedTextField` (backend/store/fields.py) is the one way a secret is stored.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from backend.config import Settings

PREFIX = "enc:v1:"
KEY_FILE = "secrets.key"
PLAIN_CACHE = 1024  # stored values whose plain text a keyring keeps (an account holds 1-3)


class SecretsKeyError(RuntimeError):
    """No usable key, or a stored secret that no configured key decrypts. The message never holds a key."""


def key_path(settings: Settings) -> Path:
    return settings.data_dir / KEY_FILE


def _parse(text: str, source: str) -> list[bytes]:
    keys = [k.strip().encode() for k in text.replace(",", "\n").splitlines() if k.strip()]
    if not keys:
        raise SecretsKeyError(f"{source} holds no key")
    for i, key in enumerate(keys, 1):
        try:
            Fernet(key)
        except (ValueError, TypeError):
            raise SecretsKeyError(
                f"{source}: key {i} is not a Fernet key (32 url-safe base64-encoded bytes; "
                "make one with `python -c 'from cryptography.fernet import Fernet; "
                "print(Fernet.generate_key().decode())'`)"
            ) from None
    return keys


def write_key_file(path: Path, keys: list[bytes]) -> None:
    """Replace the key file atomically (a new file, mode 0600, fsynced, then renamed over the old one)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(b"".join(k + b"\n" for k in keys))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def ensure_key_file(path: Path) -> None:
    """Create the key file with one new key if there is none (two processes racing: one wins, both use it)."""
    if path.exists():
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "wb") as fh:
        fh.write(Fernet.generate_key() + b"\n")
        fh.flush()
        os.fsync(fh.fileno())


class Keyring:
    """The keys of one configuration: from the environment (fixed) or from a key file (re-read when replaced)."""

    def __init__(self, *, env_keys: str | None, path: Path) -> None:
        self.from_environment = bool(env_keys and env_keys.strip())
        self.path = path
        self._env = env_keys or ""
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._keys: list[bytes] = []
        self._multi: MultiFernet | None = None
        self._plain: dict[str, str] = {}  # stored value -> plain text, under the keys of `_multi`

    def __repr__(self) -> str:  # never the keys
        return f"<Keyring {'SOCIALPUB_SECRETS_KEY' if self.from_environment else self.path}>"

    @property
    def source(self) -> str:
        return "SOCIALPUB_SECRETS_KEY" if self.from_environment else str(self.path)

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load(self, *, create: bool, check_file: bool = True) -> MultiFernet:
        with self._lock:
            if self.from_environment:
                if self._multi is None:
                    self._keys = _parse(self._env, "SOCIALPUB_SECRETS_KEY")
                    self._multi = MultiFernet([Fernet(k) for k in self._keys])
                    self._plain = {}
                return self._multi
            if self._multi is not None and not check_file:
                return self._multi
            stamp = self._file_stamp()
            if stamp is None:
                if not create:
                    raise SecretsKeyError(
                        f"no secrets key at {self.path}: the stored tokens cannot be read "
                        "(restore that file, or set SOCIALPUB_SECRETS_KEY)"
                    )
                ensure_key_file(self.path)
                stamp = self._file_stamp()
            if self._multi is None or stamp != self._stamp:
                self._keys = _parse(self.path.read_text(), str(self.path))
                self._multi = MultiFernet([Fernet(k) for k in self._keys])
                self._stamp = stamp
                self._plain = {}  # new keys: what the old ones decrypted is decrypted again
            return self._multi

    def keys(self) -> list[bytes]:
        """The keys in force (the first encrypts), re-read from the file."""
        self._load(create=True)
        return list(self._keys)

    def ensure(self) -> None:
        """Make sure a key exists (the key file is created when missing): at init."""
        self._load(create=True)

    def encrypt(self, text: str) -> str:
        """Never with a key made up on the spot: a missing key file (a restore without it, a cleaned data dir)
        is an error, not a new key that the values already stored could not be read with (`ensure` at init
        makes the key; migration 0020 made it for data dirs older than it)."""
        return PREFIX + self._load(create=False).encrypt(text.encode()).decode()

    def decrypt(self, stored: str) -> str:
        plain = self._plain.get(stored)
        if plain is not None:
            return plain
        token = stored[len(PREFIX) :].encode()
        multi = self._load(create=False, check_file=False)
        try:
            return self._remember(stored, multi.decrypt(token).decode(), multi)
        except InvalidToken:
            pass
        multi = self._load(
            create=False
        )  # the file may have been replaced since (a rotation by another process)
        try:
            return self._remember(stored, multi.decrypt(token).decode(), multi)
        except InvalidToken:
            raise SecretsKeyError(
                f"a stored secret cannot be decrypted with the key(s) of {self.source}: was the key replaced? "
                "(servers sharing a database must share the key: SOCIALPUB_SECRETS_KEY)"
            ) from None

    def _remember(self, stored: str, plain: str, multi: MultiFernet) -> str:
        with self._lock:
            if multi is not self._multi:  # the keys were read anew meanwhile: not under the keys in force
                return plain
            if len(self._plain) >= PLAIN_CACHE:
                del self._plain[next(iter(self._plain))]  # the oldest
            self._plain[stored] = plain
        return plain

    def primary(self) -> Fernet:
        """The key that encrypts, alone (a value it decrypts needs no re-encryption)."""
        return Fernet(self.keys()[0])

    def multi(self) -> MultiFernet:
        return self._load(create=True)


_keyring: Keyring | None = None
_guard = threading.Lock()


def configure(settings: Settings) -> Keyring:
    """Point the store at the keys `settings` name (at `init_database`); the same source keeps its keyring."""
    global _keyring
    env = settings.secrets_key
    path = key_path(settings)
    with _guard:
        current = _keyring
        if current is not None and current._env == (env or "") and current.path == path:
            return current
        _keyring = Keyring(env_keys=env, path=path)
        return _keyring


def keyring() -> Keyring:
    ring = _keyring
    if ring is None:
        raise SecretsKeyError("the secrets key is not configured: init_database(settings) first")
    return ring


def encrypt(text: str) -> str:
    return keyring().encrypt(text)


def decrypt(stored: str) -> str:
    return keyring().decrypt(stored)


def is_encrypted(value: object) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)
