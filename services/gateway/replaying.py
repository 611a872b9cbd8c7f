"""What the web page draws, computed from a game's `History` (read from Redis, or parsed from a
game file the page opened): public states at consecutive versions, the public events as the
public stream holds them, the fairness report, audits. Only public things leave here: views are
`view(state, None)`, events their `public_event` copies, the seed only once the game is over."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

import msgspec

from contracts import codec
from contracts.outcome import ACCEPTED
from contracts.rejection import rejection_envelope
from games import match as m
from games.catalog import GAMES
from services import history
from services.gateway.problems import Problem
from services.gateway.responses import (
    AuditReport,
    EventItem,
    Fairness,
    FairnessFinding,
    FileHeader,
    GameFile,
    StatePage,
    VersionedState,
)
from services.gateway.rules import rule
from services.readmodel import public_state, summary

MAX_STATES = 200
_dict = msgspec.json.Decoder(dict[str, Any])


def _fold_one(agg: m.Match, env: Any) -> msgspec.Struct | None:
    """Fold one envelope; None for a type this build does not know (skipped, as readers do)."""
    if env.version == 1:
        agg.created_at_ms = env.recorded_at_ms
    try:
        event = codec.event_payload(env)
    except codec.UnknownType:
        agg.version = env.version
        return None
    m.evolve(agg, event)
    return event


def _state(agg: m.Match) -> VersionedState:
    return msgspec.convert({"version": agg.version, **public_state(agg, plain=True)}, VersionedState)


def states(hist: history.History, from_version: int, limit: int) -> StatePage:
    """The public state at each version from `from_version`, at most `limit` of them."""
    last = hist.events[-1].version if hist.events else 0
    if not 1 <= from_version <= last:
        raise Problem(404, "no-such-version", "No such version", f"the game is at version {last}", game_id=hist.game_id)
    agg = m.Match(game_id=hist.game_id)
    out: list[VersionedState] = []
    for env in hist.events:
        _fold_one(agg, env)
        if agg.version >= from_version:
            out.append(_state(agg))
            if len(out) >= limit:
                break
    return StatePage(game_id=hist.game_id, version=last, states=out)


def public_items(hist: history.History) -> list[EventItem]:
    """The game's public stream, rebuilt from its history as the referee writes it: each event's
    public copy (cursor `<version>-0`), and the CommandRejected of each refusal of a known sender
    after the event of the version it was judged at (`<version>-<n>`, n from 1)."""
    agg = m.Match(game_id=hist.game_id)
    keyed: list[tuple[tuple[int, int], EventItem]] = []
    for env in hist.events:
        event = _fold_one(agg, env)
        if event is None:
            continue
        shown = m.public_event(agg, event)
        if shown is None:
            continue
        public = msgspec.structs.replace(env, payload=msgspec.Raw(codec.encode(shown)))
        keyed.append(((env.version, 0), EventItem(cursor=f"{env.version}-0", event=_dict.decode(codec.encode(public)))))
    seen: dict[int, int] = {}
    for o in hist.outcomes:
        if o.status == ACCEPTED or not (o.authenticated or o.admin):
            continue  # as the referee: a refusal is public only when its sender is known
        n = seen[o.judged_at_version] = seen.get(o.judged_at_version, 0) + 1
        env = rejection_envelope(o)
        item = EventItem(cursor=f"{o.judged_at_version}-{n}", event=_dict.decode(codec.encode(env)))
        keyed.append(((o.judged_at_version, n), item))
    keyed.sort(key=lambda pair: pair[0])
    return [item for _, item in keyed]


def fairness(hist: history.History) -> Fairness:
    """`services.history.verify`, once the game is over (before that, nothing: the findings of a
    running game could quote its hidden deck order)."""
    agg = history.fold(hist)
    if agg.status != m.OVER:
        return Fairness(game_id=hist.game_id, over=False, seed_commitment=agg.seed_commitment)
    verdict = history.verify(hist)
    return Fairness(
        game_id=hist.game_id,
        over=True,
        ok=verdict.ok,
        seed_verified=verdict.seed_verified,
        seed_commitment=agg.seed_commitment,
        seed=agg.seed,
        events=verdict.events,
        commands=verdict.commands,
        findings=[FairnessFinding(check=f.check, version=f.version, problem=f.problem) for f in verdict.findings],
    )


def audit_report(hist: history.History, version: int | None, command_id: str | None) -> AuditReport:
    if (command_id is None) == (version is None):
        raise Problem(400, "invalid-parameter", "Give exactly one of command_id or version")
    try:
        outcome = history.find_outcome(hist, version, command_id)
    except LookupError as exc:
        raise Problem(404, "no-such-command", "No such command", str(exc), game_id=hist.game_id) from None
    report = history.audit(hist, outcome)
    return AuditReport(
        game_id=report.game_id,
        command=report.command,
        verdict=report.verdict,
        state_before=report.state_before,
        legal_actions=report.legal_actions,
        events=report.events,
        rule=rule(outcome.rule) if outcome.status != ACCEPTED else None,
    )


# ---- game files ------------------------------------------------------------------------------


class OpenedFile(msgspec.Struct, kw_only=True):
    history: history.History
    header: FileHeader


def invalid(detail: str) -> Problem:
    return Problem(422, "invalid-file", "Not a game file this build can replay", detail[:300])


def parse_file(body: bytes) -> OpenedFile:
    """A game file's history, checked enough to replay: its lines parse, its game type is known,
    its events are numbered from 1 without a gap, and it folds to the end."""
    if not body.strip():
        raise invalid("the file is empty")
    try:
        header, hist = history.parse_export(body.splitlines())
    except ValueError as exc:
        raise invalid(str(exc)) from None
    if header.game_type not in GAMES:
        raise invalid(f"unknown game type {header.game_type!r}")
    if not hist.events or [e.version for e in hist.events] != list(range(1, len(hist.events) + 1)):
        raise invalid("its events are not numbered 1, 2, 3, ...")
    agg = m.Match(game_id=hist.game_id)
    for env in hist.events:
        try:
            _fold_one(agg, env)
        except Exception as exc:  # an untrusted file: any failure to replay is the file's
            raise invalid(f"cannot replay version {env.version}: {type(exc).__name__}") from None
    if agg.game_type != header.game_type:
        raise invalid("its first event does not create a game of the header's type")
    return OpenedFile(
        history=hist,
        header=FileHeader(
            game_id=header.game_id,
            game_type=header.game_type,
            rules_version=header.rules_version,
            data_version=header.data_version,
            seats=list(header.seats),
            events=len(hist.events),
            outcomes=len(hist.outcomes),
        ),
    )


def game_file(opened: OpenedFile) -> GameFile:
    hist = opened.history
    try:
        report = fairness(hist)
    except Exception as exc:  # verify of a hand-made file may fail in ways a recorded game cannot
        report = Fairness(
            game_id=hist.game_id,
            over=True,
            findings=[FairnessFinding(check="replay", problem=f"cannot re-judge: {type(exc).__name__}")],
        )
    agg = history.fold(hist)
    return GameFile(
        header=opened.header,
        summary=summary(agg),
        version=agg.version,
        events=public_items(hist),
        fairness=report,
    )


class FileCache:
    """The last few files opened, by SHA-256 of their bytes: the page sends its file again with
    each request (the gateway keeps nothing a client relies on), and this spares parsing it again."""

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._files: OrderedDict[str, OpenedFile] = OrderedDict()
        self._lock = threading.Lock()  # files are parsed in worker threads

    def open(self, body: bytes) -> OpenedFile:
        digest = hashlib.sha256(body).hexdigest()
        with self._lock:
            found = self._files.get(digest)
        if found is None:
            found = parse_file(body)
        with self._lock:
            self._files[digest] = found
            self._files.move_to_end(digest)
            while len(self._files) > self.size:
                self._files.popitem(last=False)
        return found
