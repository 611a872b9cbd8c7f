"""Artifacts, Inc. (2-4 players): roll adventurer dice, run expeditions, sell to museums, dive."""

from __future__ import annotations

from games.artifacts.rules import ArtifactsRules

RULES = ArtifactsRules()

__all__ = ["RULES", "ArtifactsRules"]
