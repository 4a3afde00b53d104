"""What a network says the creator of a connected account may choose now (the registry entry's `choices`).

Some networks tell, per account, which values of a post's options the creator may pick (TikTok's creator_info:
the privacy levels the account offers, the interactions the creator turned off, the longest video). A network
offering this names a function `fn(adapter, access_token) -> AccountChoices` in its registry entry
(`Network(..., choices="module:fn")`); `GET /v1/accounts/{id}/choices` answers it (backend/services/choices.py)
and the front ends show it (the TUI's options form, the CLI's questions, `recipes validate`). A network without
one answers no choices. Everything here is generic: each field is named by the option's wire name in
`options.<network>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FieldChoice:
    """One option of `options.<network>` as the account allows it now.

    allowed: the values the creator may choose now (None: not a list of values); offered: what the network offers
    the account (more than `allowed` when this installation may not use some: an unaudited TikTok app); required:
    the creator must choose (nothing pre-selected); locked: the creator's own settings fix it (a front end shows it
    greyed, unticked, and sends nothing); note: why (`allowed` narrower than `offered`, `locked`)."""

    field: str
    allowed: tuple[str, ...] | None = None
    offered: tuple[str, ...] | None = None
    required: bool = False
    locked: bool = False
    note: str = ""


@dataclass(frozen=True)
class AccountChoices:
    """A network's answer for one account. creator_name / creator_handle: whom the post goes to, as the network
    names them (a front end shows it before sending); limits: e.g. `maxVideoDurationS`; notes: what the user must
    know before choosing; consent: the sentence a front end must show before sending (the network's rules);
    answer: the network's own answer, verbatim."""

    creator_name: str | None = None
    creator_handle: str | None = None
    fields: tuple[FieldChoice, ...] = ()
    limits: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    consent: str | None = None
    answer: Mapping[str, Any] = field(default_factory=dict)
