"""Field types shared by the models."""

from __future__ import annotations

from datetime import UTC, datetime

from peewee import DatabaseProxy, DateTimeField, SqliteDatabase, TextField

from backend.store import secretbox


class UTCDateTimeField(DateTimeField):
    """A UTC instant. Python side: aware UTC datetimes (a naive datetime given is taken as UTC).

    Stored without relying on the driver's default adapters (sqlite3's are deprecated since Python 3.12):
    on SQLite as fixed-width text 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC); on PostgreSQL as a naive UTC
    `timestamp`. Text written before this format was fixed (peewee's DateTimeField through sqlite3's default
    adapter: no fraction when the microsecond was 0) reads back the same; migration 0013 rewrote it to the
    fixed width so that comparisons in SQL stay exact."""

    def _on_sqlite(self) -> bool:
        db = self.model._meta.database
        if isinstance(db, DatabaseProxy):
            db = db.obj
        return isinstance(db, SqliteDatabase)

    def db_value(self, value: datetime | str | None) -> datetime | str | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            value = self.adapt(value)  # type: ignore[no-untyped-call]  # peewee: Field.adapt is untyped in its stubs; text is parsed as DateTimeField parses it
            if not isinstance(value, datetime):
                raise ValueError(f"{self.name}: not a date and time: {value!r}")
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        # SQLite compares these columns as text: always six fractional digits, so that text order is time order
        return value.isoformat(" ", "microseconds") if self._on_sqlite() else value

    def python_value(self, value: datetime | str | None) -> datetime | str | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = self.adapt(value)  # type: ignore[no-untyped-call]  # peewee: Field.adapt is untyped in its stubs
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value


class EncryptedTextField(TextField):
    """A secret (network token, webhook signing secret): the one way secrets are stored.

    Python side: the plain text. Stored: `enc:v1:<Fernet token>` under the store's keyring
    (backend/store/secretbox.py), so the database (file, dump, backup) holds no secret in clear. None and the
    empty string (no secret) are stored as they are. A value without the prefix is plaintext written before
    migration 0020 and reads back as it is. Encryption is not deterministic: never compare such a column in SQL."""

    def db_value(self, value: object) -> str | None:
        if value is None:
            return None
        if value == "":
            return ""
        return secretbox.encrypt(str(value))

    def python_value(self, value: str | None) -> str | None:
        if value is not None and secretbox.is_encrypted(value):
            return secretbox.decrypt(value)
        return value
