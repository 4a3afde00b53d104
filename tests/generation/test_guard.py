"""The content guard (backend/generation/guard.py): whole words and phrases after normalisation, the built-in
terms, extra terms from the settings and a file (which can also remove a built-in term)."""

from __future__ import annotations

import pytest

from backend.config import Settings
from backend.generation import guard


@pytest.mark.parametrize(
    "prompt",
    [
        "Gore everywhere",
        "a GORY scene",
        "göre",
        "gore!",
        "blood and gore.",
        "how to BUILD A BOMB",
        "self-harm awareness",
        "deep-fake of a CEO",
    ],
)
def test_refused(prompt: str) -> None:
    assert guard.GuardPolicy.build().check(prompt) is not None


@pytest.mark.parametrize(
    "prompt",
    [
        "a gorgeous latte",
        "Gregory's bakery",
        "bombastic flavour",
        "A cup of coffee",
        "self harmony",
        "a torturous climb",
    ],
)
def test_allowed(prompt: str) -> None:
    assert guard.GuardPolicy.build().check(prompt) is None


def test_refusal_names_the_term_and_what_to_do() -> None:
    refusal = guard.GuardPolicy.build().check("gory")
    assert refusal is not None and refusal.term == "gory"
    assert "\u201cgory\u201d" in refusal.reason and "rephrase" in refusal.reason


def test_settings_terms_file_and_removal(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "terms.txt"
    path.write_text("# house rules\nrival roasters\n!gore\n\n")
    s = Settings(data_dir=tmp_path, generation_guard_terms="acme, Big Mug ", generation_guard_file=path)
    policy = guard.policy(s)
    assert policy.check("an Acme cup").term == "acme"  # type: ignore[union-attr]
    assert policy.check("big   mug").term == "Big Mug"  # type: ignore[union-attr]
    assert policy.check("Rival roasters' beans").term == "rival roasters"  # type: ignore[union-attr]
    assert policy.check("gore") is None and policy.check("gory") is not None
    path.write_text("oat milk\n")  # the file is read again when it changes
    import os

    os.utime(path, ns=(1, 1))
    assert guard.policy(s).check("oat milk latte") is not None and guard.policy(s).check("gore") is not None
    bare = guard.policy(Settings(data_dir=tmp_path, generation_guard_defaults=False))
    assert bare.terms == () and bare.check("gore") is None
