"""The credit ledger (backend/services/credits.py): the balance is the running sum of the entries; balances that
existed before the ledger become one `opening` entry (migration 0017)."""

from __future__ import annotations

import pytest
from playhouse.migrations import Runner

from backend.services import credits
from backend.store.db import MIGRATIONS_DIR, database
from backend.store.models import CreditEntry, Workspace


def test_balances_before_the_ledger_become_opening_entries(settings, owner, other_owner):
    runner = Runner(database.obj, directory=str(MIGRATIONS_DIR), table_name="schema_migration")
    later = sorted(
        (p.stem for p in MIGRATIONS_DIR.glob("0*.py") if p.stem > "0017_generations"), reverse=True
    )
    assert runner.down("0017_generations") == [*later, "0017_generations"]
    Workspace.update(credits_balance=123).where(Workspace.id == owner.workspace_id).execute()
    assert runner.up() == ["0017_generations", *reversed(later)]
    opening = list(CreditEntry.select())
    assert [(e.workspace_id, e.reason, e.amount, e.balance_after) for e in opening] == [
        (owner.workspace_id, "opening", 123, 123)
    ]
    assert opening[0].id.startswith("cre_") and len(opening[0].id) == 30
    for ws in (owner.workspace_id, other_owner.workspace_id):
        assert credits.ledger_sum(ws) == credits.balance(ws)


def test_entries_record_the_balance_after(settings, owner):
    ws = owner.workspace_id
    credits.grant(ws, 200, "STARTER")
    assert credits.charge(ws, "gen_a", 45) == credits.Movement(-45, 155)
    assert credits.charge(ws, "gen_b", 200) is None  # short: nothing written
    assert credits.refund(ws, "gen_b") is None  # never charged: nothing to give back
    assert credits.refund(ws, "gen_a") == credits.Movement(45, 200)
    assert credits.adjust(ws, set_to=10) == credits.Movement(-190, 10)
    with pytest.raises(ValueError):
        credits.adjust(ws, add=-11)
    rows = [(e.reason, e.amount, e.balance_after, e.generation_id) for e in reversed(credits.entries(ws))]
    assert rows == [
        ("grant", 200, 200, None),
        ("charge", -45, 155, "gen_a"),
        ("refund", 45, 200, "gen_a"),
        ("admin", -190, 10, None),
    ]
    assert credits.balance(ws) == credits.ledger_sum(ws) == 10
