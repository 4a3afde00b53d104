"""Posts (spec 2.4, 3.1, 4.4), one module per concern: `checks` (validation before acceptance or a change),
`accept` (creation, idempotency, the publish job), `public` (the one serializer and the reads), `query` (the
list), `edit` (editing and cancelling)."""
