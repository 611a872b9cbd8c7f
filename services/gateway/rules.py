"""Every rule id a refusal can cite, with its text and the document that states it."""

from __future__ import annotations

from games import match as m
from games.catalog import SPECS
from services.gateway.responses import RuleText


def _index() -> dict[str, RuleText]:
    out = {
        rule: RuleText(id=rule, text=text, doc="docs/rules/lifecycle.md") for rule, text in m.LIFECYCLE_RULES.items()
    }
    for spec in SPECS.values():
        out.update({rule: RuleText(id=rule, text=text, doc=spec.rules_doc) for rule, text in spec.rule_texts.items()})
    return out


RULES: dict[str, RuleText] = _index()


def rule(rule_id: str | None) -> RuleText | None:
    return RULES.get(rule_id or "")
