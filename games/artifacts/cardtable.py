"""The card faces and the rule-text values as Markdown, generated from the component data.

`python -m games.artifacts.cardtable` rewrites the generated blocks of docs/rules/artifacts.md
(between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`); a test checks they are current.
"""

from __future__ import annotations

import sys
from pathlib import Path

from games import docblocks
from games.artifacts.components import Ability, Action, ArtifactsData, Face, load
from games.artifacts.rule_ids import RULES_TEXT, placeholders

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules" / "artifacts.md"

# Where each rule-text placeholder comes from in the data file.
SOURCES: dict[str, str] = {
    "boxes_2p": "`museums.boxes_2p` (length)",
    "boxes_3p": "`museums.boxes_3p` (length)",
    "market": "`table.market_slots`",
    "first_player_dice": "`table.first_player_dice`",
    "starting_money": "`table.starting_money`",
    "starting_cards": "the `S` deck's Level 1 names",
    "dice_in_box": "`table.dice_in_box`",
    "collectors_per_artifact": "the `collectors` action's `amount`",
    "collectors_per_kind": "the `collectors` action's `per`",
    "dive_reputation": "`table.dive_reputation`",
    "end_reputation": "`table.end_reputation`",
    "max_rounds": "`table.max_rounds`",
}


def _words(name: str) -> str:
    return name.replace("_", " ")


def action_text(a: Action) -> str:
    need = f"[{a.die}] "
    if a.effect == "artifact":
        return f"{need}{a.amount} {a.kind}"
    if a.effect == "artifact_adjacent":
        return f"{need}{a.amount} {a.kind} +{a.per}/adjacent {a.category}"
    if a.effect == "dollars":
        return f"{need}${a.amount}"
    if a.effect == "dollars_adjacent":
        return f"{need}${a.amount} +{a.per}/adjacent {a.category}"
    if a.effect == "dollars_finds":
        return f"{need}${a.amount} +{a.per}/{_words(a.find)} find"
    if a.effect == "buy":
        return f"{need}buy/upgrade"
    if a.effect == "collectors":
        return f"{need}{a.amount} dollar per artifact + {a.per} per kind beyond the first"
    return f"{need}{a.effect}"


def ability_text(ab: Ability) -> str:
    if ab.effect == "rep_adjacent":
        return f"+{ab.per} rep/adjacent {ab.category}"
    return f"+{ab.per} rep/{_words(ab.find)} find"


def face_text(f: Face) -> str:
    parts = [f"{f.name}: {f.reputation} rep"]
    if f.adventurers:
        parts.append(f"{f.adventurers} dice")
    parts += [action_text(a) for a in f.actions]
    parts += [ability_text(ab) for ab in f.abilities]
    return "; ".join(parts)


def render_faces(d: ArtifactsData) -> str:
    lines = [
        "| museum | die | bonus | majority | boxes (2p) | boxes (3-4p) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for m in d.museums.values():
        lines.append(
            f"| {m.name} | {m.die} | {m.bonus} | {m.majority} | {', '.join(map(str, m.boxes_2p))} "
            f"| {', '.join(map(str, m.boxes_3p))} |"
        )
    lines.append("")
    for p in d.public.values():
        lines.append(f"- {p.name}: " + "; ".join(action_text(a) for a in p.actions))
    finds = ", ".join(f"{d.underwater[u].number} {_words(d.underwater[u].find)}" for u in d.underwater_ids)
    lines.append(f"- Underwater cards (number, find): {finds}.")
    lines += ["", "| id | deck | type | cost | Level 1 | Level 2 |", "| --- | --- | --- | --- | --- | --- |"]
    for a in d.assets.values():
        cost = str(a.cost)
        if a.scrolls:
            cost += " + scroll" if a.scrolls == 1 else f" + {a.scrolls} scrolls"
        lines.append(f"| {a.id} | {a.deck} | {a.category} | {cost} | {face_text(a.lv1)} | {face_text(a.lv2)} |")
    return "\n".join(lines)


def render_values(d: ArtifactsData) -> str:
    values = placeholders(d)
    used = [name for name in values if any("{" + name + "}" in text for text in RULES_TEXT.values())]
    lines = ["| placeholder | as shipped | data file |", "| --- | --- | --- |"]
    lines += [f"| `{{{name}}}` | {values[name]} | {SOURCES[name]} |" for name in used]
    return "\n".join(lines)


def blocks(d: ArtifactsData) -> dict[str, str]:
    return {"values": render_values(d), "faces": render_faces(d)}


def apply(text: str, generated: dict[str, str]) -> str:
    return docblocks.apply(DOC, text, generated)


def main() -> int:
    return docblocks.update(DOC, blocks(load()))


if __name__ == "__main__":
    sys.exit(main())
