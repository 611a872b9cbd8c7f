"""Mechanica (1-4 players): run a bot factory, buy improvements from the rotating shop, sell bots."""

from __future__ import annotations

from games.mechanica.rules import MechanicaRules

RULES = MechanicaRules()

__all__ = ["RULES", "MechanicaRules"]
