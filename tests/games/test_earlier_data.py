"""A game keeps the data it was created with: after the data file changes, a build that still ships
the earlier file (the spec's earlier_data) judges, replays and verifies the game with that data."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

from contracts import codec
from contracts import lifecycle as lc
from contracts.protocol import Action, TurnRequestOut
from contracts.registry import type_name
from contracts.views.mechanica import MechanicaView
from games import catalog
from games import match as m
from games.base import Rejected
from games.catalog import GREEDY, SPECS
from games.mechanica.bots import GreedyBot
from games.mechanica.components import DATA_FILE, load
from games.mechanica.rules import MechanicaRules
from games.offline import determinizer_for, new_game
from games.spec import GameSpecError
from services import history as h
from services.archive import marker_for
from services.bots import RawAction, RawTurnRequest, SearchBudget, SearchWireBot, WireBot, make_bot
from services.history import History
from services.readmodel import summary
from services.selfplay import record_game
from services.turns.app import turn_requests

OLD = "mechanica-data-0"
OLD_MONEY = 20  # the current file says 8


@pytest.fixture
def old_file(tmp_path: Path) -> Path:
    text = DATA_FILE.read_text()
    assert 'data_version = "mechanica-data-2"' in text and "money = 8\n" in text
    path = tmp_path / f"{OLD}.toml"
    path.write_text(
        text.replace('data_version = "mechanica-data-2"', f'data_version = "{OLD}"').replace(
            "money = 8\n", f"money = {OLD_MONEY}\n"
        )
    )
    return path


async def played_under_old_data(old_file: Path, monkeypatch: pytest.MonkeyPatch) -> History:
    """A whole 2-player game refereed while the old file was the current data."""
    with monkeypatch.context() as patch:
        patch.setitem(catalog.GAMES, "mechanica", MechanicaRules(load(old_file)))
        bots = [GREEDY["mechanica"](), GREEDY["mechanica"]()]
        return await record_game("mechanica", bots, "earlier-data", game_id="earlier")


def recorded(old_file: Path) -> str:
    """The version a game records: Mechanica's loader appends the file's content hash."""
    version = load(old_file).data_version
    assert version.startswith(f"{OLD}+")
    return version


def keep(monkeypatch: pytest.MonkeyPatch, old_file: Path) -> None:
    """This build ships the old file as earlier data."""
    spec = SPECS["mechanica"]
    kept = dataclasses.replace(
        spec,
        earlier_data={recorded(old_file): str(old_file)},  # an absolute path: package_dir / it is it
        data_files=(*spec.data_files, str(old_file)),
        with_data=lambda path: MechanicaRules(load(path)),
    )
    kept.check()
    monkeypatch.setitem(SPECS, "mechanica", kept)
    for version, rules in catalog.earlier_rules(kept).items():
        monkeypatch.setitem(catalog.EARLIER, ("mechanica", version), rules)


async def test_a_kept_earlier_data_version_replays_and_verifies(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = await played_under_old_data(old_file, monkeypatch)
    created = codec.event_payload(history.events[0])
    assert isinstance(created, lc.GameCreated) and created.data_version == recorded(old_file)
    keep(monkeypatch, old_file)

    match = m.Match(game_id="earlier")
    for env in history.events[:8]:
        m.evolve(match, codec.event_payload(env))
    assert match.rules.data_version == recorded(old_file)
    assert match.game is not None
    view = match.rules.view(match.game, 0)
    assert isinstance(view, MechanicaView)
    assert [p.wallet for p in view.players] == [OLD_MONEY, OLD_MONEY]

    verdict = h.verify(history)
    assert verdict.ok, verdict.findings
    assert verdict.commands == len(history.outcomes)

    # Archived, the game's marker still names its data: read back, it is bound to the old rules
    # (the web page draws it with them) and its summary says which data it was played with.
    marker, _ = marker_for(history, h.fold(history), "f.jsonl.gz", "0" * 64, 0)
    archived = m.evolve(m.Match(game_id="earlier", version=len(history.events)), marker)
    assert archived.status == m.ARCHIVED and archived.rules.data_version == recorded(old_file)
    assert summary(archived).data_version == recorded(old_file)


async def test_a_game_whose_data_this_build_lacks_is_refused_not_misjudged(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = await played_under_old_data(old_file, monkeypatch)
    # No earlier_data: the current rules would judge it with 8 starting money. They refuse instead.
    verdict = h.verify(history)
    assert not verdict.ok and [f.check for f in verdict.findings] == ["version"]
    match = m.Match(game_id="earlier")
    for env in history.events:
        m.evolve(match, codec.event_payload(env))
        if m.to_act(match):
            break
    assert match.game is not None
    seat = m.to_act(match)[0]
    legal = match.rules.legal_actions(match.game, seat)
    info = match.seats[seat]
    assert info is not None
    req = m.Request(seat=seat, token_hash=info.token_hash, payload=legal[0])
    refused = m.decide(match, req)
    assert isinstance(refused, Rejected) and refused.rule == "GAME-VERSION"


def test_a_spec_must_ship_its_earlier_data(old_file: Path) -> None:
    spec = SPECS["mechanica"]
    loader = lambda path: MechanicaRules(load(path))  # noqa: E731
    old = f"data/{OLD}.toml"
    with pytest.raises(GameSpecError, match="data_files"):
        dataclasses.replace(spec, earlier_data={OLD: old}, with_data=loader).check()
    with pytest.raises(GameSpecError, match="with_data"):
        dataclasses.replace(spec, earlier_data={OLD: old}, data_files=(old,), with_data=None).check()
    # examples/check_fairness.py finds an old game's data file by its version alone.
    with pytest.raises(GameSpecError, match=r"must be named <data_version>\.toml"):
        dataclasses.replace(
            spec, earlier_data={OLD: "data/old.toml"}, data_files=("data/old.toml",), with_data=loader
        ).check()


def test_an_earlier_file_must_hold_the_version_it_is_filed_under(old_file: Path) -> None:
    spec = SPECS["mechanica"]
    wrong = dataclasses.replace(
        spec,
        earlier_data={"mechanica-data-00": str(old_file)},
        data_files=(*spec.data_files, str(old_file)),
        with_data=lambda path: MechanicaRules(load(path)),
    )
    with pytest.raises(GameSpecError, match=r"holds 'mechanica-data-0\+"):
        catalog.earlier_rules(wrong)


def test_an_earlier_file_that_does_not_load_or_cannot_be_published_is_refused(tmp_path: Path) -> None:
    spec = SPECS["mechanica"]
    missing = str(tmp_path / "gone" / f"{OLD}.toml")
    loader = lambda path: MechanicaRules(load(path))  # noqa: E731
    gone = dataclasses.replace(spec, earlier_data={OLD: missing}, data_files=(missing,), with_data=loader)
    with pytest.raises(GameSpecError, match="does not load"):
        catalog.earlier_rules(gone)
    # The web page draws an old game from its data: the publisher must take the earlier file.
    with pytest.raises(GameSpecError, match="catalog_data"):
        dataclasses.replace(gone, catalog_data=lambda: {}).check()


async def test_a_search_seat_in_a_game_on_earlier_data_searches_that_data(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = await played_under_old_data(old_file, monkeypatch)
    keep(monkeypatch, old_file)
    old = catalog.EARLIER[("mechanica", recorded(old_file))]
    assert isinstance(old, MechanicaRules)
    # Fold the public stream, as the bot runner feeds it, to the first move a seat chooses.
    match = m.Match(game_id="earlier")
    entries = []
    for env in history.events:
        m.evolve(match, codec.event_payload(env))
        shown = m.public_event(match, codec.event_payload(env))
        assert shown is not None
        entries.append((f"{env.version}-0".encode(), {b"data": codec.encode_stored(replace(env, payload=shown))}))
        if match.game is not None and m.to_act(match):
            break
    seat = m.to_act(match)[0]
    bot = SearchWireBot("mechanica", seed=3, budget=SearchBudget(iterations=6, seconds=60.0))
    assert bot.rules is SPECS["mechanica"].rules
    bot.follow(entries)
    # The search, its prior and rollouts and its determinizer read the data the game was created with.
    assert bot.rules is old and bot.search.rules is old
    assert isinstance(bot.search.prior, GreedyBot) and bot.search.prior.data is old.data
    determinize = determinizer_for(old)
    assert isinstance(determinize, functools.partial) and determinize.keywords["data"] is old.data
    legal = old.legal_actions(match.game, seat)
    req = RawTurnRequest(
        game_id="earlier",
        seat=seat,
        version=match.version,
        view=msgspec.Raw(codec.encode(old.view(match.game, seat))),
        legal_actions=[RawAction(type=type_name(a), payload=msgspec.Raw(codec.encode(a))) for a in legal],
    )
    kind, payload = bot.choose(req)
    assert (kind, payload) in [(type_name(a), codec.encode(a)) for a in legal]
    assert bot.search.last_iterations == 6  # searched, not answered by the prior alone


@pytest.mark.parametrize("kind", ["greedy", "planner"])
async def test_a_hosted_rule_based_seat_in_a_game_on_earlier_data_reads_that_data(
    kind: str, old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = await played_under_old_data(old_file, monkeypatch)
    keep(monkeypatch, old_file)
    old = catalog.EARLIER[("mechanica", recorded(old_file))]
    current = SPECS["mechanica"].rules
    assert isinstance(old, MechanicaRules) and isinstance(current, MechanicaRules)
    match = m.Match(game_id="earlier")
    for env in history.events:
        m.evolve(match, codec.event_payload(env))
        if match.game is not None and m.to_act(match):
            break
    assert match.game is not None
    # The request as the turn service writes it, as the bot runner reads it.
    [(seat, message), *_] = turn_requests(match, 1_700_000_000_000)
    assert isinstance(message, TurnRequestOut) and message.data_version == recorded(old_file)
    req = msgspec.json.decode(codec.encode(message), type=RawTurnRequest)
    hosted = make_bot(kind, "mechanica", seed=0)
    assert isinstance(hosted, WireBot) and hosted.bot.data is current.data
    answer = hosted.choose(req)
    assert hosted.bot.data is old.data and hosted.slow == (kind == "planner")
    mine = catalog.bot_makers("mechanica", old)[kind](0)
    expected = mine.choose(old.view(match.game, seat), old.legal_actions(match.game, seat), seat)
    assert answer == (type_name(expected), codec.encode(expected))
    # A request naming data this build lacks leaves the bot as it is (the referee refuses such a
    # game, GAME-VERSION); one naming the current data reads the current data again.
    hosted.choose(msgspec.structs.replace(req, data_version="mechanica-data-missing"))
    assert hosted.bot.data is old.data
    hosted.choose(msgspec.structs.replace(req, data_version=current.data_version))
    assert hosted.bot.data is current.data


def test_a_hosted_greedy_seat_plays_an_earlier_files_game_as_that_files_greedy() -> None:
    # Prosperity keeps two earlier files whose tiles the greedy bot values otherwise (Bicycle paths,
    # Canal network, Villages were retuned): at some request of a game created under the first,
    # greedy over it and greedy over the current file choose apart, and the hosted seat answers as
    # the first. The game is played by greedy over the first file, as the hosted seat would.
    first = catalog.EARLIER[("prosperity", "prosperity-data-1")]
    mine, theirs = catalog.bot_makers("prosperity", first)["greedy"](0), catalog.GREEDY["prosperity"]()
    hosted, by_dicts = make_bot("greedy", "prosperity"), make_bot("greedy", "prosperity")
    game = new_game(first, 2, "earlier-greedy")
    apart = 0
    while not game.is_terminal():
        [(seat, message), *_] = turn_requests(game.match, 1_700_000_000_000)
        assert isinstance(message, TurnRequestOut) and message.data_version == "prosperity-data-1"
        req = msgspec.json.decode(codec.encode(message), type=RawTurnRequest)
        legal = game.legal_actions(seat)
        expected = mine.choose(game.view(seat), legal, seat)
        apart += expected != theirs.choose(game.view(seat), legal, seat)
        assert hosted.choose(req) == (type_name(expected), codec.encode(expected))
        # From dicts (a client's `choose_action`), the same.
        actions = [Action(type=a.type, payload=msgspec.json.decode(a.payload)) for a in req.legal_actions]
        chosen = by_dicts.choose_action(msgspec.json.decode(req.view), actions, seat, req.data_version)
        assert chosen == Action(type=type_name(expected), payload=msgspec.to_builtins(expected))
        game.apply(expected, seat)
    assert apart > 0, "the files' greedy bots never chose apart: the test shows nothing"


def test_a_hosted_random_seat_is_never_rebuilt() -> None:
    # It reads no data, and a new one would start its draws again.
    hosted = make_bot("random", "mechanica", seed=5)
    bot = hosted.bot
    hosted._over("mechanica-data-1")
    assert hosted.bot is bot
