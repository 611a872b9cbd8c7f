"""The aggregate the referee decides on: a game's lifecycle (seats, start, end) around its rules.

Pure like the rules it wraps: `decide` turns a request into events or a refusal, `evolve` folds an
event in. Secrets the service must supply (a new game's seed, a joining seat's token hash) arrive as
request fields, so re-running `decide` on a recorded request reproduces the recorded events.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec

from contracts import lifecycle as lc
from contracts.registry import type_name
from games.base import DecidesInPlace, Rejected, Result, Rules
from games.catalog import rules_for
from games.rng import Rng, seed_commitment

NEW, OPEN, RUNNING, OVER = "new", "open", "running", "over"
# Over, and moved out of Redis by `dicestream archive` (its log holds only lifecycle.GameArchived).
ARCHIVED = "archived"

# Lifecycle rules, cited by refusals like a game's own rules (docs/rules/lifecycle.md).
LIFECYCLE_RULES: dict[str, str] = {
    "GAME-UNKNOWN-TYPE": "A command must name a known command type.",
    "GAME-MALFORMED": "A command's envelope and payload must match their schemas (no unknown fields, within limits).",
    "GAME-DUPLICATE-ID": "A command id names one command: another command under an id already judged is refused.",
    "GAME-NOT-FOUND": "Only CreateGame may address a game that does not exist yet.",
    "GAME-EXISTS": "A game is created once.",
    "GAME-UNKNOWN-GAME": "CreateGame must name a game this service runs.",
    "GAME-PLAYERS": "The number of players must be within the game's range.",
    "GAME-NOT-OPEN": "Seats can be joined only before the game starts.",
    "GAME-SEAT-RANGE": "A seat number must be between 0 and the number of players minus 1.",
    "GAME-SEAT-TAKEN": "A seat is joined once.",
    "GAME-SEATS-EMPTY": "A game starts only when every seat is joined.",
    "GAME-NOT-RUNNING": "Moves are accepted only while the game is running.",
    "GAME-AUTH": "A command for a seat must carry that seat's token.",
    "GAME-REPLY-TO": (
        "A command may name only reply streams of its sender: a seat's, of the client that joined the seat; "
        "one from a client's own intake, of that client."
    ),
    "GAME-STALE": "A command's expected_version must equal the game's current version.",
    "GAME-RESIGNED": "A seat that resigned sends no more moves.",
    "GAME-NOT-ADMIN": "Only the referee's own services may force a default action.",
    "GAME-NOT-WAITING": "A default action is forced only on a seat the game still waits for, at that version.",
    "GAME-VERSION": "A game is judged only by the rules and data version it was created with.",
    "GAME-ARCHIVED": "An archived game takes no more commands: replay, verify and audit it from its archive.",
}


def rejected(rule: str, detail: str = "") -> Rejected:
    return Rejected(rule=rule, text=LIFECYCLE_RULES[rule], detail=detail)


class SeatInfo(msgspec.Struct, kw_only=True):
    name: str
    kind: str
    token_hash: str | None
    resigned: bool = False
    # The client of the JoinSeat's reply_to (private, like the token hash).
    reply_client: str | None = None


class Match(msgspec.Struct, kw_only=True):
    game_id: str
    version: int = 0
    status: str = NEW
    game_type: str = ""
    num_players: int = 0
    rules_version: str = ""
    data_version: str = ""
    seed: str | None = None
    seed_commitment: str = ""
    move_timeout_s: float | None = None
    seats: list[SeatInfo | None] = msgspec.field(default_factory=list)
    game: Any = None
    result: Result | None = None
    # The game's rules, looked up in the catalog once at GameCreated (the hot path asks for them
    # per event). An offline game binds its rules object before CreateGame instead (any variant of
    # a game, catalogued or not), and a rules object bound under the created game's name is kept.
    rules_impl: Any = None
    # When GameCreated was recorded (epoch ms): set by readers from its envelope (the read models
    # list games newest first); the rules never read it.
    created_at_ms: int = 0

    @property
    def rules(self) -> Rules[Any]:
        assert self.rules_impl is not None, f"{self.game_id} has no game type yet"
        return self.rules_impl  # type: ignore[no-any-return]


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """A command as the aggregate judges it: authenticated facts, never the raw token."""

    payload: msgspec.Struct
    seat: int | None = None
    token_hash: str | None = None
    expected_version: int | None = None
    admin: bool = False
    # The client named by the command's reply_to (`<prefix>:reply:<client>:...`), if it has one.
    reply_client: str | None = None
    # Supplied by the service for CreateGame / JoinSeat (see module docstring).
    new_seed: str | None = None
    new_token_hash: str | None = None


def authenticated(match: Match, seat: int | None, token_hash: str | None) -> bool:
    if seat is None or token_hash is None or not 0 <= seat < len(match.seats):
        return False
    info = match.seats[seat]
    return info is not None and info.token_hash == token_hash


def decide(match: Match, req: Request, apply: bool = False, in_place: bool = False) -> list[msgspec.Struct] | Rejected:
    """Events for `req`, or the rule that refuses it. With `apply`, an accepted command's events
    are also folded into `match` (the referee's cache does this to avoid folding twice; a refusal
    never changes `match`). With `in_place` too, a game that offers `decide_into` folds into
    `match.game` without a scratch copy: faster, but a bug raising inside the rules would leave
    the state half-changed, so only offline play, where one caller owns the game, asks for it."""
    cmd = req.payload
    if match.status == ARCHIVED:
        return rejected("GAME-ARCHIVED", f"game {match.game_id!r} is over and archived")
    lifecycle = type(cmd) in _LIFECYCLE_COMMANDS
    if lifecycle and isinstance(cmd, lc.CreateGame):
        return _folded(match, _create(match, cmd, req), apply)
    if match.status == NEW:
        return rejected("GAME-NOT-FOUND", f"no game {match.game_id!r}")
    rules = match.rules
    if match.rules_version != rules.rules_version or match.data_version != rules.data_version:
        return rejected(
            "GAME-VERSION",
            f"created with {match.rules_version}/{match.data_version}, this referee runs "
            f"{rules.rules_version}/{rules.data_version}",
        )
    if req.expected_version is not None and req.expected_version != match.version:
        return rejected("GAME-STALE", f"expected version {req.expected_version}, game is at {match.version}")
    if lifecycle and isinstance(cmd, lc.JoinSeat):
        return _folded(match, _join(match, cmd, req), apply)
    if lifecycle and isinstance(cmd, lc.ForceDefault):
        return _force(match, cmd, req, apply)
    if not authenticated(match, req.seat, req.token_hash):
        return rejected("GAME-AUTH", "missing or wrong token for this seat")
    assert req.seat is not None
    joined = match.seats[req.seat]
    if req.reply_client is not None and joined is not None and joined.reply_client not in (None, req.reply_client):
        # The sender is known (it holds the seat's token): it may not make the referee write into
        # another client's reply streams.
        return rejected(
            "GAME-REPLY-TO", f"reply_to names client {req.reply_client!r}, not the client that joined seat {req.seat}"
        )
    if lifecycle and isinstance(cmd, lc.StartGame):
        return _start(match, apply)
    if match.status != RUNNING:
        return rejected("GAME-NOT-RUNNING", f"game is {match.status}")
    if joined is not None and joined.resigned:
        return rejected("GAME-RESIGNED", f"seat {req.seat} resigned")
    if lifecycle and isinstance(cmd, lc.Resign):
        return _after(match, [lc.PlayerResigned(seat=req.seat)], apply)
    if type(cmd) not in rules.command_types:
        return rejected("GAME-UNKNOWN-TYPE", f"{type_name(cmd)} is not a {match.game_type} command")
    rng = Rng.for_version(_seed(match), match.version)
    if apply and in_place and _decides_in_place(rules):
        out = cast("DecidesInPlace", rules).decide_into(match.game, req.seat, cmd, rng)
        if isinstance(out, Rejected):
            return out
        match.version += len(out)
        return _after(match, out, apply, folded=True)
    out = rules.decide(match.game, req.seat, cmd, rng)
    if isinstance(out, Rejected):
        return out
    return _after(match, out, apply)


_IN_PLACE: dict[type, bool] = {}


def _decides_in_place(rules: Rules[Any]) -> bool:
    """Does the class that gives `rules` its `decide` give its `decide_into` too? A variant that
    overrides `decide` only, or a wrapper forwarding attributes to another game, must not have its
    own `decide` bypassed by the inner game's `decide_into`."""
    kind = type(rules)
    known = _IN_PLACE.get(kind)
    if known is None:
        owner = next((k for k in kind.__mro__ if "decide" in vars(k) or "decide_into" in vars(k)), None)
        known = _IN_PLACE[kind] = owner is not None and "decide" in vars(owner) and "decide_into" in vars(owner)
    return known


def _folded(match: Match, out: list[msgspec.Struct] | Rejected, apply: bool) -> list[msgspec.Struct] | Rejected:
    if apply and not isinstance(out, Rejected):
        for ev in out:
            evolve(match, ev)
    return out


def _seed(match: Match) -> str:
    assert match.seed is not None, "a running game always knows its seed"
    return match.seed


def _create(match: Match, cmd: lc.CreateGame, req: Request) -> list[msgspec.Struct] | Rejected:
    if match.status != NEW:
        return rejected("GAME-EXISTS", f"game {match.game_id!r} exists")
    rules = _bound_or_catalogued(match, cmd.game_type)
    if rules is None:
        return rejected("GAME-UNKNOWN-GAME", f"no game type {cmd.game_type!r}")
    if not rules.min_players <= cmd.num_players <= rules.max_players:
        return rejected("GAME-PLAYERS", f"{cmd.game_type} takes {rules.min_players}-{rules.max_players} players")
    assert req.new_seed is not None, "the service supplies the seed"
    return [
        lc.GameCreated(
            game_type=cmd.game_type,
            num_players=cmd.num_players,
            rules_version=rules.rules_version,
            data_version=rules.data_version,
            seed_commitment=seed_commitment(req.new_seed),
            seed=req.new_seed,
            move_timeout_s=cmd.move_timeout_s,
        )
    ]


def _join(match: Match, cmd: lc.JoinSeat, req: Request) -> list[msgspec.Struct] | Rejected:
    if match.status != OPEN:
        return rejected("GAME-NOT-OPEN", f"game is {match.status}")
    if not 0 <= cmd.seat < match.num_players:
        return rejected("GAME-SEAT-RANGE", f"seat {cmd.seat} of {match.num_players}")
    if match.seats[cmd.seat] is not None:
        return rejected("GAME-SEAT-TAKEN", f"seat {cmd.seat} is taken")
    assert req.new_token_hash is not None, "the service supplies the token hash"
    return [
        lc.SeatJoined(
            seat=cmd.seat, name=cmd.name, kind=cmd.kind, token_hash=req.new_token_hash, reply_client=req.reply_client
        )
    ]


def _start(match: Match, apply: bool) -> list[msgspec.Struct] | Rejected:
    if match.status != OPEN:
        return rejected("GAME-NOT-OPEN", f"game is {match.status}")
    if any(s is None for s in match.seats):
        return rejected("GAME-SEATS-EMPTY", "every seat must be joined")
    # Set-up draws on the RNG of GameStarted's own version (the first this command writes).
    setup = match.rules.setup(match.num_players, Rng.for_version(_seed(match), match.version + 1))
    return _after(match, [lc.GameStarted(), *setup], apply)


def _force(match: Match, cmd: lc.ForceDefault, req: Request, apply: bool) -> list[msgspec.Struct] | Rejected:
    if not req.admin:
        return rejected("GAME-NOT-ADMIN")
    if match.status != RUNNING or match.version != cmd.at_version or cmd.seat not in match.rules.to_act(match.game):
        return rejected("GAME-NOT-WAITING", f"seat {cmd.seat} at version {cmd.at_version}")
    return _after(match, [], apply, forced=(cmd.seat, "timeout"))


def _after(
    match: Match,
    events: list[msgspec.Struct],
    apply: bool,
    forced: tuple[int, str] | None = None,
    folded: bool = False,
) -> list[msgspec.Struct]:
    """Fold `events` (into `match` itself when applying, else into a copy; `folded`: the game
    already has), then play what the referee must play on its own: a timed-out seat's default
    action, resigned seats' turns, and the end of the game."""
    scratch = match if apply else clone(match)
    if not folded:
        for ev in events:
            evolve(scratch, ev)
    out = list(events)
    rules = scratch.rules
    pending = forced
    while scratch.status == RUNNING and not rules.is_over(scratch.game):
        if pending is None:
            seats = scratch.seats
            waiting = [s for s in rules.to_act(scratch.game) if (info := seats[s]) is not None and info.resigned]
            if not waiting:
                break
            pending = (waiting[0], "resigned")
        seat, reason = pending
        pending = None
        action = rules.default_action(scratch.game, seat)
        marker = lc.DefaultActionForced(seat=seat, reason=reason, command_type=type_name(action))
        evolve(scratch, marker)
        played = rules.decide(scratch.game, seat, action, Rng.for_version(_seed(scratch), scratch.version))
        assert not isinstance(played, Rejected), f"default action refused: {played}"
        for ev in played:
            evolve(scratch, ev)
        out += [marker, *played]
    if scratch.status == RUNNING and rules.is_over(scratch.game):
        res = rules.result(scratch.game)
        end = [
            lc.GameEnded(scores=res.scores, winners=res.winners, breakdown=res.breakdown),
            lc.SeedRevealed(seed=_seed(scratch)),
        ]
        for ev in end:
            evolve(scratch, ev)
        out += end
    return out


def _bound_or_catalogued(match: Match, game_type: str, data_version: str | None = None) -> Rules[Any] | None:
    bound = match.rules_impl
    if bound is not None and bound.name == game_type:
        return bound  # type: ignore[no-any-return]
    return rules_for(game_type, data_version)


def clone(match: Match, keep_game: bool = True) -> Match:
    """An independent copy; with keep_game=False its `game` is left shared, for a caller that
    replaces it (a determinization) and so need not pay for a copy."""
    copy = msgspec.structs.replace(match, seats=[msgspec.structs.replace(s) if s else None for s in match.seats])
    if keep_game and match.game is not None:
        copy.game = match.rules.clone(match.game)
    return copy


def evolve(match: Match, event: msgspec.Struct) -> Match:
    match.version += 1
    if type(event) not in _LIFECYCLE_EVENTS:
        # Most events are the game's own: one set lookup instead of the lifecycle checks below
        # (replay speed).
        match.game = match.rules.evolve(match.game, event)
        return match
    if isinstance(event, lc.GameCreated):
        match.status = OPEN
        match.game_type = event.game_type
        match.num_players = event.num_players
        match.rules_version = event.rules_version
        match.data_version = event.data_version
        match.seed = event.seed
        match.seed_commitment = event.seed_commitment
        match.move_timeout_s = event.move_timeout_s
        match.seats = [None] * event.num_players
        match.rules_impl = _bound_or_catalogued(match, event.game_type, event.data_version)
    elif isinstance(event, lc.SeatJoined):
        match.seats[event.seat] = SeatInfo(
            name=event.name, kind=event.kind, token_hash=event.token_hash, reply_client=event.reply_client
        )
    elif isinstance(event, lc.GameStarted):
        match.status = RUNNING
        match.game = match.rules.initial_state(match.num_players)
    elif isinstance(event, lc.PlayerResigned):
        info = match.seats[event.seat]
        assert info is not None
        info.resigned = True
    elif isinstance(event, lc.GameEnded):
        match.status = OVER
        match.result = Result(scores=event.scores, winners=event.winners, breakdown=event.breakdown)
    elif isinstance(event, (lc.DefaultActionForced, lc.SeedRevealed)):
        pass
    elif isinstance(event, lc.GameArchived):
        _archived(match, event)
    else:
        match.game = match.rules.evolve(match.game, event)
    return match


def _archived(match: Match, event: lc.GameArchived) -> None:
    """What is left of an archived game in Redis: who played, the result, the revealed seed."""
    match.status = ARCHIVED
    match.game_type = event.game_type
    match.num_players = event.num_players
    match.seats = [
        SeatInfo(name=name, kind=kind or "", token_hash=None) if name is not None else None
        for name, kind in zip(event.players, event.kinds, strict=False)
    ]
    match.result = Result(scores=event.scores, winners=event.winners)
    match.seed, match.seed_commitment = event.seed, event.seed_commitment
    match.created_at_ms = event.created_at_ms
    match.rules_version, match.data_version = event.rules_version, event.data_version
    match.rules_impl = rules_for(event.game_type, event.data_version or None)
    match.game = None


_LIFECYCLE_EVENTS = frozenset(lc.EVENTS)
_LIFECYCLE_COMMANDS = frozenset(lc.COMMANDS)


def public_event(match: Match, event: msgspec.Struct) -> msgspec.Struct | None:
    """The event as every audience may see it (the log itself stays private)."""
    if type(event) not in _LIFECYCLE_EVENTS:
        # Every game event goes through its game's filter (a set lookup first: the referee asks
        # this for every event it appends).
        return match.rules.public_event(event) if match.rules_impl is not None else event
    if isinstance(event, lc.GameCreated):
        return msgspec.structs.replace(event, seed=None)
    if isinstance(event, lc.SeatJoined):
        return msgspec.structs.replace(event, token_hash=None, reply_client=None)
    return event


def to_act(match: Match) -> list[int]:
    if match.status != RUNNING:
        return []
    return match.rules.to_act(match.game)
