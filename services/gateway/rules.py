"""Every rule id a refusal can cite, with its text and the document that states it."""

from __future__ import annotations

import importlib

from games import match as m
from games.catalog import GAMES
from services.gateway.responses import RuleText


def _index() -> dict[str, RuleText]:
    out = {
        rule: RuleText(id=rule, text=text, doc="docs/rules/lifecycle.md") for rule, text in m.LIFECYCLE_RULES.items()
    }
    for name in GAMES:
        module = importlib.import_module(f"games.{name}.rule_ids")
        texts: dict[str, str] = getattr(module, "RULES_TEXT", {})
        out.update({rule: RuleText(id=rule, text=text, doc=f"docs/rules/{name}.md") for rule, text in texts.items()})
    return out


RULES: dict[str, RuleText] = _index()


def rule(rule_id: str | None) -> RuleText | None:
    return RULES.get(rule_id or "")
