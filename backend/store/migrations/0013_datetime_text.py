"""SQLite: every date-time column holds fixed-width text 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC).

Before, the values went through sqlite3's default datetime adapter (`isoformat(" ")`), which leaves the
fraction out when the microsecond is 0 ('2030-01-31 09:00:00'): such a value compared as text with the same
instant written with its fraction ('2030-01-31 09:00:00.000000') is smaller, so `<=` / `>=` / `=` against
an exact second were wrong. This pads them (and turns a '+00:00' suffix, written when an aware datetime
reached the adapter, into the naive UTC text). PostgreSQL stores real timestamps: nothing to do there.
"""

from peewee import Database, SqliteDatabase, Table, fn
from playhouse.migrate import SchemaMigrator

_WHOLE_SECOND = 19  # len('YYYY-MM-DD HH:MM:SS')
_WITH_FRACTION = 26  # len('YYYY-MM-DD HH:MM:SS.ffffff')


def up(migrator: SchemaMigrator, db: Database) -> None:
    if not isinstance(db, SqliteDatabase):
        return
    for table in db.get_tables():
        columns = [c.name for c in db.get_columns(table) if c.data_type.upper() == "DATETIME"]
        if not columns:
            continue
        t = Table(table).bind(db)
        for name in columns:
            col = getattr(t.c, name)
            utc = col.endswith("+00:00")
            t.update({col: fn.substr(col, 1, _WITH_FRACTION)}).where(
                utc & (fn.length(col) == _WITH_FRACTION + 6)
            ).execute()
            t.update({col: fn.substr(col, 1, _WHOLE_SECOND)}).where(
                utc & (fn.length(col) == _WHOLE_SECOND + 6)
            ).execute()
            t.update({col: col.concat(".000000")}).where(fn.length(col) == _WHOLE_SECOND).execute()


def down(migrator: SchemaMigrator, db: Database) -> None:
    pass  # the padded text reads back the same
