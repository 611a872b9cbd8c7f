"""Prosperity (2-4 players): build a country over seven decades, keep pollution in check."""

from __future__ import annotations

from games.prosperity.rules import ProsperityRules

RULES = ProsperityRules()

__all__ = ["RULES", "ProsperityRules"]
