"""Sentient's view: the whole table (no private hands); `you` only says who asks."""

from __future__ import annotations

import msgspec


class FactorySlot(msgspec.Struct, frozen=True, kw_only=True):
    slot: int
    card: str | None
    # Per seat: influence (agents + assistants) and agents on this slot.
    influence: list[int]
    agents: list[int]


class InvestorAt(msgspec.Struct, frozen=True, kw_only=True):
    position: int
    investor: str
    type: str
    # The factory slots (1-based) whose influence this investor counts.
    slots: list[int]


class SentientPlayer(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    board_side: str
    starting_investor: str
    dice: list[int]
    # Card id per network slot 1..4 (null: empty).
    network: list[str | None]
    agents: int
    assistants: int
    passed: bool
    vp: int
    investors: list[str]
    # The starting investor's type, then each won investor's.
    investor_types: list[str]
    collected: list[str]


class SentientView(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="sentient"):
    you: int | None
    round: int
    over: bool
    to_act: list[int]
    turn_order: list[int]
    next_turn_order: list[int]
    deck_size: int
    discard: list[str]
    factory: list[FactorySlot]
    # Per position 0..4 (null: no investor there).
    investors: list[InvestorAt | None]
    players: list[SentientPlayer]
    final_scores: list[int]
    winners: list[int]
