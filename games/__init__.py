"""Pure game rules: one package per game, each a decider (see games/base.py)."""
