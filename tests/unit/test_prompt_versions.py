"""Prompts are versioned: a landed ``prompts/<task>.v<N>.md`` is never edited (a changed prompt is a new version), so
that the name, version and hash each ``llm_calls`` row records keep meaning what the model was told. Pure."""

from __future__ import annotations

import re

from socialrag.recommender.explain.prompts import load_prompt
from socialrag.resources import resource_dir

# each landed prompt's hash (``Prompt.hash``); a new version adds its line here, an old line never changes
LANDED = {
    "answer.v1.md": "80ee5d956a91344a",
    "answer.v2.md": "711b82dda522b20f",
    "ask.v1.md": "0ab5a8ffd9e9f2c3",
    "final.v1.md": "77d103739bee6ff5",
    "final.v2.md": "f54150370f865fb2",
    "final.v3.md": "78ca490bce00a2c1",
    "final.v4.md": "fa71888a8a9812cb",
    "member.v1.md": "f8dcaa3bdab7b13f",
    "member.v2.md": "147d17199517789d",
    "member.v3.md": "36e6509e61b6ef65",
    "paper.v1.md": "5c82755d8251b8db",
    "paper.v2.md": "23def672d5cbea93",
    "paper.v3.md": "a497c97e5a117462",
    "relation.v1.md": "738639c28587824f",
    "relation.v2.md": "f8612538fe16b8c8",
    "relation.v3.md": "153714c555eff175",
}
_NAME = re.compile(r"^([a-z0-9_]+)\.v(\d+)\.md$")


def test_every_prompt_file_is_a_versioned_prompt() -> None:
    names = sorted(p.name for p in resource_dir("prompts").iterdir() if p.name != "README.md")
    assert all(_NAME.match(n) for n in names), names


def test_no_landed_prompt_is_edited_and_each_new_one_is_listed() -> None:
    """Editing ``final.v4.md`` in place would make rows recorded as final v4 mean two prompts: write ``final.v5.md``
    and add its hash to ``LANDED`` instead."""
    found = {}
    for path in resource_dir("prompts").iterdir():
        m = _NAME.match(path.name)
        if m:
            found[path.name] = load_prompt(m.group(1), int(m.group(2))).hash
    assert set(found) >= set(LANDED), f"a landed prompt is gone: {sorted(set(LANDED) - set(found))}"
    edited = sorted(n for n in LANDED if found[n] != LANDED[n])
    assert not edited, f"landed prompts edited in place (write a new version instead): {edited}"
    unlisted = sorted(set(found) - set(LANDED))
    assert not unlisted, f"new prompt versions to list in LANDED with their hashes: {unlisted}"
