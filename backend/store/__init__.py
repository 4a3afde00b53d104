"""The store: peewee models, database setup, versioned schema migrations."""
