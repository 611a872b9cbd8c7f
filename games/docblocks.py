"""Blocks of a rules doc generated from a game's data, between `<!-- generated:NAME -->` and
`<!-- /generated:NAME -->` markers, so the doc cannot drift from the data (tests compare them)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path


def _filler(body: str) -> Callable[[re.Match[str]], str]:
    # A function, not a replacement string: bodies hold backslashes that re.sub would interpret.
    return lambda m: m.group(1) + body + "\n" + m.group(2)


def apply(doc: Path, text: str, generated: dict[str, str]) -> str:
    """`text` (the content of `doc`) with every generated block replaced by its current content."""
    for name, body in generated.items():
        pattern = re.compile(rf"(<!-- generated:{name} -->\n).*?(<!-- /generated:{name} -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"{doc}: no <!-- generated:{name} --> block")
        text = pattern.sub(_filler(body), text)
    return text


def update(doc: Path, generated: dict[str, str]) -> int:
    """Rewrite `doc` if a block changed; the exit status of the generating command."""
    text = doc.read_text(encoding="utf-8")
    new = apply(doc, text, generated)
    if new != text:
        doc.write_text(new, encoding="utf-8")
        print("updated", doc)
    else:
        print("current", doc)
    return 0
