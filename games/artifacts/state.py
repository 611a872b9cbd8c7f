"""Artifacts, Inc. game state: a mutable tree that `evolve` updates in place (cheap replay)."""

from __future__ import annotations

import msgspec

from games.artifacts.components import KINDS, MARKET_DECKS

ARRANGE, PLAY, OVER = "arrange", "play", "over"
SETUP = "setup"
HIDDEN_CARD = "?"


class Placed(msgspec.Struct, kw_only=True):
    """An owned asset card: its id, the side up (1 or 2) and its place in the two rows."""

    card: str
    level: int
    row: int
    col: int


class PlayerState(msgspec.Struct, kw_only=True):
    cards: list[Placed] = msgspec.field(default_factory=list)
    dollars: int = 0
    # Artifact cubes per kind, in KINDS order (fossil, scroll, gem, statue).
    artifacts: list[int] = msgspec.field(default_factory=lambda: [0] * len(KINDS))
    # Underwater card ids, in the order they were found.
    underwater: list[str] = msgspec.field(default_factory=list)
    # The cube on the reputation track (ReputationMarked keeps it at the visible total).
    reputation: int = 0
    arranged: bool = False


class ArtifactsState(msgspec.Struct, kw_only=True):
    num_players: int
    players: list[PlayerState]
    phase: str = SETUP
    museum_side: str = ""
    museum_ids: list[str] = msgspec.field(default_factory=list)
    # Underwater stack, top first.
    underwater: list[str] = msgspec.field(default_factory=list)
    # Per market deck (A..E, index = MARKET_DECKS order): hidden draw pile top first, face-up slots.
    decks: list[list[str]] = msgspec.field(default_factory=lambda: [[] for _ in MARKET_DECKS])
    market: list[list[str | None]] = msgspec.field(default_factory=lambda: [[] for _ in MARKET_DECKS])
    # Per museum (file order), per order box: the seat whose cube fills it, or None.
    boxes: list[list[int | None]] = msgspec.field(default_factory=list)
    order: list[int] = msgspec.field(default_factory=list)
    current: int | None = None
    round: int = 0
    # The active turn: unplaced dice (face values), used action slots ("card#action"), dive taken.
    dice: list[int] = msgspec.field(default_factory=list)
    used: list[str] = msgspec.field(default_factory=list)
    dived: bool = False
    triggered: bool = False
    # Per museum: the seat that won its majority at the end (None: nobody), empty before.
    majorities: list[int | None] = msgspec.field(default_factory=list)
    winners: list[int] = msgspec.field(default_factory=list)

    @property
    def over(self) -> bool:
        return self.phase == OVER


def new_state(num_players: int) -> ArtifactsState:
    return ArtifactsState(num_players=num_players, players=[PlayerState() for _ in range(num_players)])


def _clone_player(p: PlayerState) -> PlayerState:
    return PlayerState(
        cards=[Placed(card=c.card, level=c.level, row=c.row, col=c.col) for c in p.cards],
        dollars=p.dollars,
        artifacts=p.artifacts[:],
        underwater=p.underwater[:],
        reputation=p.reputation,
        arranged=p.arranged,
    )


def clone(s: ArtifactsState) -> ArtifactsState:
    """A deep copy, written out by hand because it is on the decide path."""
    return ArtifactsState(
        num_players=s.num_players,
        players=[_clone_player(p) for p in s.players],
        phase=s.phase,
        museum_side=s.museum_side,
        museum_ids=s.museum_ids[:],
        underwater=s.underwater[:],
        decks=[d[:] for d in s.decks],
        market=[m[:] for m in s.market],
        boxes=[b[:] for b in s.boxes],
        order=s.order[:],
        current=s.current,
        round=s.round,
        dice=s.dice[:],
        used=s.used[:],
        dived=s.dived,
        triggered=s.triggered,
        majorities=s.majorities[:],
        winners=s.winners[:],
    )


def slot_key(card: str, action: int) -> str:
    return f"{card}#{action}"
