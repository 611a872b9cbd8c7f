"""Sentient (2-4 players): acquire bots, connect them between your dice, court the investors."""

from __future__ import annotations

from games.sentient.rules import SentientRules

RULES = SentientRules()

__all__ = ["RULES", "SentientRules"]
