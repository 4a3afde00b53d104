"""The credit ledger (issue 15): every movement of a workspace's credits is one signed entry.

`workspace.credits_balance` is the running sum of the workspace's entries, changed only here, in the same
transaction as the entry that explains the change (and, for a generation, in the transaction of the state change
that causes it). Every function below takes the workspace row lock first (FOR UPDATE on PostgreSQL; SQLite's write
transactions are serialised already), so concurrent charges of one workspace queue up and the balance never goes
below zero. UNIQUE (generation_id, reason) is the backstop that makes a second charge or a second refund of one
generation impossible, whatever the code path.

Reasons: `opening` (the balance when the ledger was introduced), `grant` (the plan's monthly allowance), `admin`
(an operator's change, `socialpub admin credits`), `charge` (a generation accepted), `refund` (a generation
failed, or deleted before it started).
"""

from __future__ import annotations

from dataclasses import dataclass

from peewee import fn

from backend import clock
from backend.ids import new_id
from backend.store.db import is_sqlite, tx
from backend.store.models import CreditEntry, Workspace

REASONS = ("opening", "grant", "admin", "charge", "refund")


class WorkspaceGone(LookupError):
    pass


@dataclass(frozen=True)
class Movement:
    amount: int
    balance_after: int


def _lock_balance(workspace_id: str) -> int:
    """The balance, the workspace row locked for the transaction. On PostgreSQL `FOR NO KEY UPDATE`: it queues
    the other balance changes but not the inserts that merely reference the workspace (their foreign-key check
    takes `KEY SHARE`), so a transaction that inserted a row of the workspace first cannot deadlock with it."""
    query = Workspace.select(Workspace.id, Workspace.credits_balance).where(Workspace.id == workspace_id)
    row = (
        query if is_sqlite() else query.for_update("FOR NO KEY UPDATE")  # type: ignore[arg-type]  # peewee: for_update takes the lock clause as a string, its stub says bool
    ).first()
    if row is None:
        raise WorkspaceGone(workspace_id)
    return int(row.credits_balance)


def _write(
    workspace_id: str,
    amount: int,
    reason: str,
    balance_after: int,
    *,
    generation_id: str | None = None,
    note: str = "",
) -> None:
    """The entry and the balance it leads to (caller holds the workspace lock inside a transaction)."""
    assert reason in REASONS
    CreditEntry.insert(
        id=new_id("cre"),
        workspace=workspace_id,
        amount=amount,
        reason=reason,
        generation_id=generation_id,
        note=note[:500],
        balance_after=balance_after,
        created_at=clock.now(),
    ).execute()
    if amount:
        Workspace.update(credits_balance=balance_after).where(Workspace.id == workspace_id).execute()


def balance(workspace_id: str) -> int:
    value = Workspace.select(Workspace.credits_balance).where(Workspace.id == workspace_id).scalar()
    if value is None:
        raise WorkspaceGone(workspace_id)
    return int(value)


def ledger_sum(workspace_id: str) -> int:
    """The sum of the workspace's entries: always equal to its balance (tests and `admin credits --check`)."""
    return int(
        CreditEntry.select(fn.COALESCE(fn.SUM(CreditEntry.amount), 0))
        .where(CreditEntry.workspace == workspace_id)
        .scalar()
        or 0
    )


def charge(workspace_id: str, generation_id: str, cost: int, note: str = "") -> Movement | None:
    """Debit `cost` for a generation. Call inside the transaction that creates the generation. None (nothing
    written) when the balance is short. A second charge of the same generation violates the UNIQUE index."""
    if cost <= 0:
        raise ValueError("a charge is a positive cost")
    with tx():
        current = _lock_balance(workspace_id)
        if current < cost:
            return None
        after = current - cost
        _write(workspace_id, -cost, "charge", after, generation_id=generation_id, note=note)
    return Movement(-cost, after)


def refund(workspace_id: str, generation_id: str, note: str = "") -> Movement | None:
    """Give back what a generation was charged, once. Call inside the transaction of the state change that
    causes it. None when there is nothing to give back (never charged, or refunded already)."""
    with tx():
        current = _lock_balance(workspace_id)
        charged = (
            CreditEntry.select(CreditEntry.amount)
            .where((CreditEntry.generation_id == generation_id) & (CreditEntry.reason == "charge"))
            .scalar()
        )
        if not charged:
            return None
        done = (
            CreditEntry.select(CreditEntry.id)
            .where((CreditEntry.generation_id == generation_id) & (CreditEntry.reason == "refund"))
            .exists()
        )
        if done:
            return None
        amount = -int(charged)
        after = current + amount
        _write(workspace_id, amount, "refund", after, generation_id=generation_id, note=note)
    return Movement(amount, after)


def grant(workspace_id: str, amount: int, note: str) -> Movement:
    """The plan's allowance (caller: workspace.refresh_allowance, inside its transaction)."""
    with tx():
        after = _lock_balance(workspace_id) + amount
        _write(workspace_id, amount, "grant", after, note=note)
    return Movement(amount, after)


def adjust(
    workspace_id: str, *, set_to: int | None = None, add: int | None = None, note: str = ""
) -> Movement:
    """An operator's change: set the balance to `set_to`, or add `add` (negative to remove). ValueError when the
    balance would become negative."""
    if (set_to is None) == (add is None):
        raise ValueError("give exactly one of set_to or add")
    with tx():
        current = _lock_balance(workspace_id)
        after = set_to if set_to is not None else current + (add or 0)
        if after < 0:
            raise ValueError(
                "the balance cannot be negative"
                if set_to is not None
                else "the balance cannot become negative"
            )
        _write(workspace_id, after - current, "admin", after, note=note or "operator change")
    return Movement(after - current, after)


def entries(workspace_id: str, *, generation_id: str | None = None, limit: int = 100) -> list[CreditEntry]:
    """The workspace's entries, newest first (optionally of one generation)."""
    q = CreditEntry.select().where(CreditEntry.workspace == workspace_id)
    if generation_id is not None:
        q = q.where(CreditEntry.generation_id == generation_id)
    return list(q.order_by(CreditEntry.id.desc()).limit(limit))


# ---- GET /v1/credits (extension): the ledger as the API shows it --------------------------------------------

MAX_HISTORY_LIMIT = 100
