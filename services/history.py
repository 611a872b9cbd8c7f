"""Replay, export/import, verification and audit of recorded games.

Everything here works on a `History` (a game's private events and its command outcomes), which
comes from Redis or from an export file, so a game can be checked offline with no Redis at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import msgspec

from contracts import codec
from contracts import lifecycle as lc
from contracts.envelope import EventEnvelope
from contracts.export import EventLine, ExportHeader, ExportLine, OutcomeLine
from contracts.outcome import ACCEPTED, CommandOutcome, decode_outcome, stored_outcome
from contracts.registry import command_type, event_type, type_name
from contracts.rejection import rejection_envelope
from contracts.upcast import outcome as upcast_outcome
from games import match as m
from games.base import Rejected
from games.catalog import VARIANT_DATA_ENV, rules_for
from services.eventstore.base import AppendRequest, EventStore


class History(msgspec.Struct, kw_only=True):
    game_id: str
    events: list[EventEnvelope]
    outcomes: list[CommandOutcome]


async def load(store: EventStore, game_id: str) -> History:
    events = [codec.decode_event(data, game_id, version) for version, data in await store.read(game_id)]
    outcomes = [upcast_outcome(decode_outcome(o, game_id)) for o in await store.audit(game_id)]
    return History(game_id=game_id, events=events, outcomes=outcomes)


def fold(history: History, to_version: int | None = None) -> m.Match:
    agg = m.Match(game_id=history.game_id)
    for env in history.events:
        if to_version is not None and env.version > to_version:
            break
        if env.version == 1:
            agg.created_at_ms = env.recorded_at_ms
        m.evolve(agg, codec.event_payload(env))
    return agg


# ---- replay ----------------------------------------------------------------------------------


class Step(msgspec.Struct, kw_only=True):
    version: int
    type: str
    command_id: str | None
    seat: int | None
    summary: str
    payload: dict[str, Any]
    scores: list[int] | None = None


def _seat_of(payload: dict[str, Any]) -> int | None:
    seat = payload.get("seat")
    return seat if isinstance(seat, int) else None


def _summary(env: EventEnvelope, payload: dict[str, Any]) -> str:
    shown = {k: v for k, v in payload.items() if k not in ("seed", "token_hash") and v not in (None, [], {})}
    parts = [f"{k}={v}" for k, v in shown.items()]
    text = ", ".join(parts)
    return text if len(text) <= 140 else text[:137] + "..."


def replay(history: History, to_version: int | None = None) -> tuple[list[Step], m.Match]:
    """A step per event up to `to_version` (public fields only), and the state reached."""
    agg = m.Match(game_id=history.game_id)
    steps: list[Step] = []
    for env in history.events:
        if to_version is not None and env.version > to_version:
            break
        try:
            event = codec.event_payload(env)
        except codec.UnknownType:
            # Written by a newer version: shown, not folded.
            agg.version = env.version
            steps.append(
                Step(
                    version=env.version,
                    type=env.type,
                    command_id=env.command_id,
                    seat=None,
                    summary="(unknown event type: skipped)",
                    payload={},
                )
            )
            continue
        m.evolve(agg, event)
        shown = m.public_event(agg, event)
        payload: dict[str, Any] = msgspec.to_builtins(shown) if shown is not None else {}
        scores = agg.result.scores if isinstance(event, lc.GameEnded) and agg.result else None
        steps.append(
            Step(
                version=env.version,
                type=env.type,
                command_id=env.command_id,
                seat=_seat_of(payload),
                summary=_summary(env, payload),
                payload=payload,
                scores=scores,
            )
        )
    return steps, agg


# ---- export / import -------------------------------------------------------------------------

_line_decoder = msgspec.json.Decoder(ExportLine)


def export_lines(history: History) -> list[bytes]:
    agg = fold(history)
    header = ExportHeader(
        game_id=history.game_id,
        game_type=agg.game_type,
        rules_version=agg.rules_version,
        data_version=agg.data_version,
        seats=[s.name if s else None for s in agg.seats],
        events=len(history.events),
        outcomes=len(history.outcomes),
    )
    lines = [codec.encode(header)]
    lines += [codec.encode(EventLine(event=e)) for e in history.events]
    lines += [codec.encode(OutcomeLine(outcome=o)) for o in history.outcomes]
    return lines


def parse_export(lines: Iterable[bytes]) -> tuple[ExportHeader, History]:
    header: ExportHeader | None = None
    events: list[EventEnvelope] = []
    outcomes: list[CommandOutcome] = []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            line = _line_decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ValueError(f"line {n}: {exc}") from exc
        if isinstance(line, ExportHeader):
            header = line
        elif isinstance(line, EventLine):
            events.append(line.event)
        else:
            # Format 1 files kept refused payloads whole: today's records keep their digest.
            outcomes.append(upcast_outcome(line.outcome))
    if header is None:
        raise ValueError("no header line: not a dicestream game file")
    return header, History(game_id=header.game_id, events=events, outcomes=outcomes)


def rebase(history: History, game_id: str) -> History:
    """The same history under another game id (for importing next to the original)."""
    return History(
        game_id=game_id,
        events=[msgspec.structs.replace(e, game_id=game_id, event_id=f"{game_id}:{e.version}") for e in history.events],
        outcomes=[msgspec.structs.replace(o, game_id=game_id) for o in history.outcomes],
    )


async def import_history(store: EventStore, history: History) -> int:
    """Append a whole history as a new game, one guarded append per recorded command."""
    agg = m.Match(game_id=history.game_id)
    by_version = {e.version: e for e in history.events}
    requests: list[AppendRequest] = []
    for o in sorted(history.outcomes, key=lambda o: (o.judged_at_version, o.status == ACCEPTED)):
        span = range(o.judged_at_version + 1, o.to_version + 1) if o.status == ACCEPTED else range(0)
        events = [by_version[v] for v in span]
        public: list[bytes | None] = []
        for env in events:
            event = codec.event_payload(env)
            m.evolve(agg, event)
            shown = m.public_event(agg, event)
            public.append(
                None
                if shown is None
                else codec.encode_stored(msgspec.structs.replace(env, payload=msgspec.Raw(codec.encode(shown))))
            )
        rejected = o.status != ACCEPTED
        requests.append(
            AppendRequest(
                game_id=history.game_id,
                expected_version=o.judged_at_version,
                command_id=o.command_id,
                outcome=stored_outcome(o),
                events=[codec.encode_stored(e) for e in events],
                public=public,
                # As the referee stores it: a public refusal only for a known sender, remembered
                # only if authenticated.
                public_rejection=codec.encode_stored(rejection_envelope(o))
                if rejected and (o.authenticated or o.admin)
                else None,
                remember=o.authenticated or not rejected,
            )
        )
    results = await store.append_many(requests)
    bad = [r for r in results if r.status != "ok"]
    if bad:
        raise ValueError(f"import of {history.game_id} refused: {bad[0].status} (does the game exist already?)")
    return len(history.events)


# ---- verify ----------------------------------------------------------------------------------


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    check: str
    version: int | None
    problem: str


class Verdict(msgspec.Struct, kw_only=True):
    game_id: str
    events: int
    commands: int
    findings: list[Finding]
    seed_verified: bool = False

    @property
    def ok(self) -> bool:
        return not self.findings


def _well_formed(history: History, findings: list[Finding]) -> bool:
    ok = True
    for expected, env in enumerate(history.events, 1):
        if env.version != expected:
            findings.append(
                Finding(
                    check="versions", version=env.version, problem=f"expected version {expected}, found {env.version}"
                )
            )
            return False
        if env.game_id != history.game_id:
            findings.append(Finding(check="game", version=env.version, problem=f"belongs to {env.game_id}"))
            ok = False
        if event_type(env.type) is None:
            findings.append(Finding(check="types", version=env.version, problem=f"unknown type {env.type}"))
            ok = False
            continue
        try:
            codec.event_payload(env)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            findings.append(Finding(check="payload", version=env.version, problem=str(exc)))
            ok = False
    return ok


def payload_bytes(o: CommandOutcome) -> bytes | None:
    """The payload a command was sent with, when it was kept: always for an accepted one, for a
    refused one when it was short enough to be whole in its digest's head."""
    if o.payload_digest is None:
        return bytes(o.payload)
    return o.payload_digest.whole()


def _request(agg: m.Match, history: History, o: CommandOutcome) -> m.Request | None:
    """The request to judge `o` again, or None when it cannot be rebuilt (an unknown type, a
    payload not kept, or one that does not decode as its type)."""
    cls = command_type(o.command_type)
    raw = payload_bytes(o)
    if cls is None or raw is None:
        return None
    try:
        payload = codec.decode_command_payload(cls, raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    token_hash = None
    if o.authenticated and o.seat is not None and 0 <= o.seat < len(agg.seats):
        info = agg.seats[o.seat]
        token_hash = info.token_hash if info else None
    new_seed = new_token_hash = None
    recorded = [codec.event_payload(e) for e in history.events[o.judged_at_version : o.to_version]]
    for ev in recorded:
        if isinstance(ev, lc.GameCreated):
            new_seed = ev.seed
        if isinstance(ev, lc.SeatJoined):
            new_token_hash = ev.token_hash
    if isinstance(payload, lc.CreateGame) and new_seed is None:
        new_seed = "unknown"
    if isinstance(payload, lc.JoinSeat) and new_token_hash is None:
        new_token_hash = "unknown"
    return m.Request(
        payload=payload,
        seat=o.seat,
        token_hash=token_hash,
        expected_version=o.expected_version,
        admin=o.admin,
        reply_client=o.reply_client,
        new_seed=new_seed,
        new_token_hash=new_token_hash,
    )


def verify(history: History) -> Verdict:
    """Well-formed log; every recorded command, re-judged on the state before it, yields exactly
    the recorded events (rolls and shuffles included, from the seed); the result matches."""
    findings: list[Finding] = []
    verdict = Verdict(
        game_id=history.game_id, events=len(history.events), commands=len(history.outcomes), findings=findings
    )
    if not _well_formed(history, findings):
        return verdict
    covered = 0
    agg = m.Match(game_id=history.game_id)
    created = codec.event_payload(history.events[0]) if history.events else None
    if isinstance(created, lc.GameCreated):
        rules = rules_for(created.game_type, created.data_version)
        if rules is not None and (rules.rules_version, rules.data_version) != (
            created.rules_version,
            created.data_version,
        ):
            # Only data can be named to this build; other rules code is another build's.
            same_code = rules.rules_version == created.rules_version
            hint = f" (a variant's data: name its file in {VARIANT_DATA_ENV})" if same_code else ""
            findings.append(
                Finding(
                    check="version",
                    version=1,
                    problem=f"recorded with {created.rules_version}/{created.data_version}; this build has "
                    f"{rules.rules_version}/{rules.data_version}: re-judging needs that version{hint}",
                )
            )
            return verdict
        # Re-judging the creation itself must record the data the game was created with.
        agg.rules_impl = rules
    accepted = sorted((o for o in history.outcomes if o.status == ACCEPTED), key=lambda o: o.judged_at_version)
    for o in accepted:
        if o.judged_at_version != covered:
            findings.append(
                Finding(
                    check="commands",
                    version=covered + 1,
                    problem=f"events {covered + 1}..{o.judged_at_version} have no recorded command",
                )
            )
            return verdict
        req = _request(agg, history, o)
        recorded = history.events[o.judged_at_version : o.to_version]
        if req is None:
            findings.append(Finding(check="commands", version=o.to_version, problem=f"unknown {o.command_type}"))
            return verdict
        out = m.decide(agg, req)
        if isinstance(out, Rejected):
            findings.append(
                Finding(
                    check="decide",
                    version=o.judged_at_version + 1,
                    problem=f"{o.command_type} {o.command_id} is now refused: {out.rule} {out.detail}",
                )
            )
            return verdict
        again = [(type_name(e), codec.encode(e)) for e in out]
        was = [(e.type, codec.encode(codec.event_payload(e))) for e in recorded]
        if again != was:
            first = next(
                (i for i, pair in enumerate(zip(again, was, strict=False)) if pair[0] != pair[1]),
                min(len(again), len(was)),
            )
            ours = str(again[first]) if first < len(again) else "nothing"
            theirs = str(was[first]) if first < len(was) else "nothing"
            findings.append(
                Finding(
                    check="decide",
                    version=o.judged_at_version + first + 1,
                    problem=f"{o.command_type} {o.command_id} yields {ours[:200]} but the log has {theirs[:200]}",
                )
            )
            return verdict
        for ev in out:
            m.evolve(agg, ev)
        covered = o.to_version
    if covered != len(history.events):
        findings.append(Finding(check="commands", version=covered + 1, problem="events after the last command"))
        return verdict
    for o in history.outcomes:
        if o.status != ACCEPTED and o.rule is None:
            findings.append(Finding(check="rejections", version=o.judged_at_version, problem="rejection without rule"))
    if agg.status == m.OVER and agg.game is not None:
        res = agg.rules.result(agg.game)
        if agg.result is None or (res.scores, res.winners) != (agg.result.scores, agg.result.winners):
            findings.append(
                Finding(check="result", version=agg.version, problem=f"recorded {agg.result}, rules say {res}")
            )
    revealed = [codec.event_payload(e) for e in history.events if e.type == "lifecycle.SeedRevealed"]
    if revealed:
        seed = revealed[-1]
        assert isinstance(seed, lc.SeedRevealed)
        if hashlib.sha256(seed.seed.encode()).hexdigest() != agg.seed_commitment:
            findings.append(Finding(check="seed", version=None, problem="revealed seed does not match the commitment"))
        elif seed.seed != agg.seed:
            findings.append(Finding(check="seed", version=None, problem="revealed seed is not the seed the game used"))
        else:
            verdict.seed_verified = True
    return verdict


# ---- audit -----------------------------------------------------------------------------------


class Audit(msgspec.Struct, kw_only=True):
    game_id: str
    command: dict[str, Any]
    verdict: dict[str, Any]
    state_before: dict[str, Any]
    legal_actions: list[dict[str, Any]]
    events: list[dict[str, Any]]
    rejudged: dict[str, Any] | None = None


def find_outcome(history: History, version: int | None = None, command_id: str | None = None) -> CommandOutcome:
    for o in history.outcomes:
        if command_id is not None and o.command_id == command_id:
            return o
        if version is not None and o.status == ACCEPTED and o.judged_at_version < version <= o.to_version:
            return o
    raise LookupError(f"no command {'id ' + command_id if command_id else f'that wrote version {version}'}")


def _shown_payload(o: CommandOutcome) -> Any:
    raw = payload_bytes(o)
    if raw is None:
        return None
    try:
        return msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None


def audit(history: History, outcome: CommandOutcome, rejudge: bool = False) -> Audit:
    before = fold(history, outcome.judged_at_version)
    state: dict[str, Any] = {"version": before.version, "status": before.status}
    legal: list[dict[str, Any]] = []
    if before.game is not None:
        state["view"] = msgspec.to_builtins(before.rules.view(before.game, None))
        if outcome.seat is not None and outcome.seat in m.to_act(before):
            legal = [
                {"type": type_name(a), "payload": msgspec.to_builtins(a)}
                for a in before.rules.legal_actions(before.game, outcome.seat)
            ]
    events: list[dict[str, Any]] = []
    if outcome.status == ACCEPTED:
        scratch = fold(history, outcome.judged_at_version)
        for env in history.events[outcome.judged_at_version : outcome.to_version]:
            event = codec.event_payload(env)
            m.evolve(scratch, event)
            shown = m.public_event(scratch, event)
            events.append(
                {
                    "version": env.version,
                    "type": env.type,
                    "payload": msgspec.to_builtins(shown) if shown is not None else None,
                }
            )
    command = {
        "command_id": outcome.command_id,
        "type": outcome.command_type,
        "seat": outcome.seat,
        "authenticated": outcome.authenticated,
        "received_at_ms": outcome.received_at_ms,
        "correlation_id": outcome.correlation_id,
        "expected_version": outcome.expected_version,
        "reply_client": outcome.reply_client,
        # A refusal keeps only a digest of its payload (and the payload when that is short).
        "payload": _shown_payload(outcome),
        "payload_digest": msgspec.to_builtins(outcome.payload_digest),
    }
    verdict = {
        "status": outcome.status,
        "rule": outcome.rule,
        "text": outcome.text,
        "detail": outcome.detail,
        "judged_at_version": outcome.judged_at_version,
        "to_version": outcome.to_version,
    }
    result = Audit(
        game_id=history.game_id,
        command=command,
        verdict=verdict,
        state_before=state,
        legal_actions=legal,
        events=events,
    )
    if rejudge:
        req = _request(before, history, outcome)
        if req is not None:
            out = m.decide(before, req)
            now = (
                {"status": "rejected", "rule": out.rule, "text": out.text, "detail": out.detail}
                if isinstance(out, Rejected)
                else {"status": ACCEPTED, "events": [type_name(e) for e in out]}
            )
            same = now["status"] == outcome.status and (
                now.get("rule") == outcome.rule
                if outcome.status != ACCEPTED
                else now.get("events") == [e["type"] for e in events]
            )
            result.rejudged = {**now, "agrees": same}
    return result
