"""What every registered game must do, iterated over the catalog: a new game gets these tests by
declaring its spec (docs/adding-a-game.md), with no edit here.

Random legal games reach the end at every player count; every event has a wire name and survives
the wire; replaying the log rebuilds the live state; the public stream rebuilds every view; a
refusal changes nothing; and a game that hides anything has a determinizer whose samples keep
every view and re-deal only what is hidden, and which works on the public stream's fold as on the
true state, giving the same sample for the same rng.
"""

from __future__ import annotations

import inspect
import random
from pathlib import Path

import jsonschema
import msgspec
import pytest

from contracts import codec
from contracts.registry import event_type, type_name
from games import match as m
from games.base import Rejected
from games.bots import RandomBot
from games.catalog import SPECS
from games.mcts import searcher
from games.offline import OfflineGame, new_game, play
from games.rng import Rng
from games.spec import GameSpec

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(SPECS)


def _played(spec: GameSpec, players: int, seed: str) -> OfflineGame:
    return play(new_game(spec.rules, players, seed), [RandomBot(f"{seed}-{s}") for s in range(players)])


def _mid_game(spec: GameSpec, seed: str, fraction: float = 0.4) -> OfflineGame:
    """A game stopped part-way: the moves of a finished random game, replayed up to `fraction`."""
    players = spec.golden_players
    full = _played(spec, players, seed)
    game = new_game(spec.rules, players, seed)
    for seat, cmd in full.history[: max(1, int(len(full.history) * fraction))]:
        game.apply(cmd, seat)
    return game


def _views(game: OfflineGame) -> list[object]:
    return [game.view(seat) for seat in (None, *range(game.num_players))]


@pytest.mark.parametrize("name", NAMES)
def test_random_games_end_at_every_player_count(name: str) -> None:
    spec = SPECS[name]
    for players in range(spec.rules.min_players, spec.rules.max_players + 1):
        for i in range(2):
            game = _played(spec, players, f"every-{name}-{players}-{i}")
            assert game.is_terminal() and game.current_player() is None
            assert game.match.result is not None
            assert set(game.match.result.winners) <= set(range(players)) and game.match.result.winners
            assert sum(game.returns()) == pytest.approx(1.0)


@pytest.mark.parametrize("name", NAMES)
def test_every_event_has_a_wire_name_and_survives_the_wire(name: str) -> None:
    game = _played(SPECS[name], SPECS[name].golden_players, f"wire-{name}")
    assert game.events is not None
    for event in game.events:
        wire = type_name(event)
        assert event_type(wire) is type(event)
        data = codec.encode(event)
        assert msgspec.json.decode(data, type=type(event)) == event
        shown = m.public_event(game.match, event)
        if shown is not None:
            assert type(shown) is type(event)
            assert msgspec.json.decode(codec.encode(shown), type=type(event)) == shown


@pytest.mark.parametrize("name", NAMES)
def test_replaying_the_log_rebuilds_the_live_state(name: str) -> None:
    game = _mid_game(SPECS[name], f"replay-{name}")
    assert game.events is not None
    rebuilt = m.Match(game_id=game.match.game_id)
    for event in game.events:
        m.evolve(rebuilt, msgspec.json.decode(codec.encode(event), type=type(event)))
    assert rebuilt.version == game.version
    assert rebuilt.game == game.state
    assert [rebuilt.rules.view(rebuilt.game, s) for s in (None, *range(game.num_players))] == _views(game)


@pytest.mark.parametrize("name", NAMES)
def test_the_public_stream_rebuilds_every_view(name: str) -> None:
    for fraction in (0.0, 0.4, 1.0):
        game = _mid_game(SPECS[name], f"public-{name}", fraction)
        seen = _public_state(game)
        rules = SPECS[name].rules
        assert [rules.view(seen, s) for s in (None, *range(game.num_players))] == _views(game)


@pytest.mark.parametrize("name", NAMES)
def test_a_refusal_changes_nothing(name: str) -> None:
    spec = SPECS[name]
    game = _mid_game(spec, f"refusal-{name}")
    seat = game.current_player()
    assert seat is not None
    before = (game.rules.clone(game.state), game.version, _views(game))
    others = [s for s in range(game.num_players) if s not in game.to_act()]
    assert others, f"{name}: every seat is to act at this point; pick another"
    for action in game.legal_actions(seat)[:5]:
        for other in others:
            out = spec.rules.decide(game.state, other, action, Rng.for_version(game.seed, game.version))
            assert isinstance(out, Rejected) and out.text
            assert spec.rule_texts.get(out.rule) == out.text, f"{out.rule} is not in the spec's rule_texts"
    assert (game.state, game.version, _views(game)) == before


@pytest.mark.parametrize("name", NAMES)
def test_deciding_in_place_is_deciding_on_a_copy_then_folding(name: str) -> None:
    """Offline play and search fold a command straight into the state when the game offers
    `decide_into`: at every step of random games it must give `decide`'s events and leave the
    state `decide`'s events fold to; a refusal (out of turn, or a move gone stale) leaves it as it
    was."""
    spec = SPECS[name]
    rules = spec.rules
    if not hasattr(rules, "decide_into"):
        pytest.skip(f"{name} decides on a copy only")
    into = rules.decide_into
    refused: set[str] = set()
    for players in range(rules.min_players, rules.max_players + 1):
        game = new_game(rules, players, f"in-place-{name}-{players}", record_events=False, native=False)
        state, version, pick = rules.clone(game.state), game.version, random.Random(players)
        # Every action legal earlier in the game: those no longer legal reach the refusals that
        # come last in a decide (funds, spaces, blocks, slots), not just the turn check.
        seen: dict[bytes, msgspec.Struct] = {}
        while not rules.is_over(state):
            seat = rules.to_act(state)[0]
            legal = rules.legal_actions(state, seat)
            tries = [(s, legal[0]) for s in range(players) if s not in rules.to_act(state)]
            tries += [(seat, a) for a in pick.sample(list(seen.values()), min(8, len(seen))) if a not in legal]
            for who, action in tries:
                expected = rules.decide(state, who, action, Rng.for_version(game.seed, version))
                if isinstance(expected, Rejected):
                    snapshot = rules.clone(state)
                    assert into(state, who, action, Rng.for_version(game.seed, version)) == expected
                    assert state == snapshot, f"{name}: {expected.rule} changed the state in place"
                    refused.add(expected.rule)
            action = legal[pick.randrange(len(legal))]
            expected = rules.decide(state, seat, action, Rng.for_version(game.seed, version))
            assert not isinstance(expected, Rejected)
            folded = rules.clone(state)
            for event in expected:
                folded = rules.evolve(folded, event)
            assert into(state, seat, action, Rng.for_version(game.seed, version)) == expected
            assert state == folded
            version += len(expected)
            seen.update((type_name(a).encode() + msgspec.json.encode(a), a) for a in legal)
    # More than the turn check: refusals from the end of a decide, where a move gone stale fails.
    assert len(refused) >= 5, refused


@pytest.mark.parametrize("name", NAMES)
def test_the_game_loop_refuses_what_no_game_checks(name: str) -> None:
    """A game's decide is never asked about a finished game or another game's command: the
    lifecycle answers both, with its own rule ids, for every game."""
    spec = SPECS[name]
    game = _mid_game(spec, f"lifecycle-{name}")
    seat = game.current_player()
    assert seat is not None
    joined = game.match.seats[seat]
    assert joined is not None
    # A command of another game that takes no fields, so that it is well formed.
    foreign = next(
        t for n, other in SPECS.items() if n != name for t in other.rules.command_types if not msgspec.structs.fields(t)
    )
    out = m.decide(game.match, m.Request(payload=foreign(), seat=seat, token_hash=joined.token_hash))
    assert isinstance(out, Rejected) and out.rule == "GAME-UNKNOWN-TYPE"
    finished = _played(spec, spec.golden_players, f"lifecycle-{name}")
    assert finished.match.status == m.OVER
    action = game.legal_actions(seat)[0]
    last = finished.match.seats[seat]
    assert last is not None
    out = m.decide(finished.match, m.Request(payload=action, seat=seat, token_hash=last.token_hash))
    assert isinstance(out, Rejected) and out.rule == "GAME-NOT-RUNNING"


def _public_state(game: OfflineGame) -> object:
    assert game.events is not None
    seen = m.Match(game_id=game.match.game_id)
    for event in game.events:
        shown = m.public_event(game.match, event)
        if shown is not None:
            m.evolve(seen, shown)
    return seen.game


def _hidden_piles(public: object, path: str = "") -> set[str]:
    """Paths of the lists holding two or more "?" in a state folded from public events."""
    out: set[str] = set()
    if isinstance(public, dict):
        for k, v in public.items():
            out |= _hidden_piles(v, f"{path}.{k}")
    elif isinstance(public, list):
        if sum(1 for v in public if v == "?") >= 2:
            out.add(path)
        for i, v in enumerate(public):
            out |= _hidden_piles(v, f"{path}[{i}]")
    return out


def _compare(public: object, truth: object, sample: object, name: str, path: str = "") -> set[str]:
    """Asserts `sample` equals `truth` wherever `public` shows a value; returns the paths of the
    lists holding hidden values ("?" in `public`) where `sample` differs from `truth`."""
    if public == "?":
        return set()
    if isinstance(public, dict):
        assert isinstance(truth, dict) and isinstance(sample, dict) and set(sample) == set(truth), (name, path)
        out: set[str] = set()
        for k, v in public.items():
            out |= _compare(v, truth[k], sample[k], name, f"{path}.{k}")
        return out
    if isinstance(public, list):
        assert isinstance(truth, list) and isinstance(sample, list), (name, path)
        assert len(sample) == len(truth) == len(public), f"{name}: {path} changed size"
        out = {path} if "?" in public and sample != truth else set()
        for i, v in enumerate(public):
            out |= _compare(v, truth[i], sample[i], name, f"{path}[{i}]")
        return out
    assert sample == truth == public, f"{name}: {path} is public ({public!r}) but the sample has {sample!r}"
    return set()


def _hides_something(game: OfflineGame) -> bool:
    assert game.events is not None
    return any(m.public_event(game.match, e) != e for e in game.events if type(e).__module__ != "contracts.lifecycle")


@pytest.mark.parametrize("name", NAMES)
def test_a_game_that_hides_anything_declares_a_determinizer(name: str) -> None:
    spec = SPECS[name]
    game = _played(spec, spec.golden_players, f"hides-{name}")
    if _hides_something(game):
        assert spec.determinize is not None, f"{name}: public_event hides something, so search needs a determinizer"


@pytest.mark.parametrize("name", NAMES)
def test_a_determinization_keeps_every_view_and_redeals_only_the_hidden(name: str) -> None:
    spec = SPECS[name]
    if spec.determinize is None:
        pytest.skip(f"{name} keeps no secrets in its state")
    for fraction in (0.0, 0.3, 0.6):
        game = _mid_game(spec, f"det-{name}", fraction)
        truth = (game.rules.clone(game.state), _views(game))
        samples = [game.clone(resample=True, rng_seed=f"s{i}") for i in range(4)]
        for sample in samples:
            assert _views(sample) == truth[1]
            assert sample.to_act() == game.to_act()
            for seat in game.to_act():
                assert sample.legal_actions(seat) == game.legal_actions(seat)
        # Against the public stream folded: a sample equals the truth wherever that fold shows a
        # value, and each hidden pile ("?" in the fold) is re-dealt in some sample.
        public = _public_state(game)
        truth_doc = msgspec.to_builtins(game.state)
        redealt: set[str] = set()
        for sample in samples:
            redealt |= _compare(msgspec.to_builtins(public), truth_doc, msgspec.to_builtins(sample.state), name)
        piles = _hidden_piles(msgspec.to_builtins(public))
        assert piles, f"{name}: nothing hidden at {fraction}, yet a determinizer is declared"
        assert piles <= redealt, f"{name}: hidden piles never re-dealt at {fraction}: {sorted(piles - redealt)}"
        # ... and a sample is a function of public facts and its rng alone: re-determinizing a
        # sample (same public facts, another hidden order) gives what the truth gives.
        rng = "again"
        assert spec.determinize(samples[0].state, Rng.for_version(rng, 1)) == spec.determinize(
            game.state, Rng.for_version(rng, 1)
        )
        # The truth is untouched, and a sample plays on to the end.
        assert (game.state, _views(game)) == truth
        play(samples[1], [RandomBot(s) for s in range(game.num_players)])
        assert samples[1].is_terminal()


@pytest.mark.parametrize("name", NAMES)
def test_the_spec_names_files_that_exist(name: str) -> None:
    spec = SPECS[name]
    package = Path(inspect.getfile(type(spec.rules))).parent
    for data in spec.data_files:
        assert (package / data).is_file(), f"{name}: no data file {data} in {package}"
    # In this repository, or beside a game package that lives elsewhere.
    assert (ROOT / spec.rules_doc).is_file() or (package / spec.rules_doc).is_file(), spec.rules_doc


@pytest.mark.parametrize("name", NAMES)
def test_every_view_is_the_spec_view_and_matches_its_schema(name: str) -> None:
    spec = SPECS[name]
    schema = msgspec.json.schema(spec.view)
    jsonschema.Draft202012Validator.check_schema(schema)
    check = jsonschema.Draft202012Validator(schema)
    for fraction in (0.0, 0.5, 1.0):
        game = _mid_game(spec, f"view-{name}", fraction)
        for view in _views(game):
            assert isinstance(view, spec.view)
            data = codec.encode(view)
            assert msgspec.json.decode(data, type=spec.view) == view
            errors = [e.message for e in check.iter_errors(msgspec.json.decode(data))]
            assert not errors, errors[:3]


def _placeholders(doc: object) -> int:
    if isinstance(doc, dict):
        return sum(_placeholders(v) for v in doc.values())
    if isinstance(doc, list):
        return sum(_placeholders(v) for v in doc)
    return int(doc == "?")


@pytest.mark.parametrize("name", NAMES)
def test_a_determinization_of_the_public_stream_equals_that_of_the_truth(name: str) -> None:
    # A search bot may hold only the public stream: determinizing its fold must work and, being a
    # function of public facts and the rng alone, give exactly what the true state gives.
    spec = SPECS[name]
    if spec.determinize is None:
        pytest.skip(f"{name} keeps no secrets in its state")
    full = _played(spec, spec.golden_players, f"det-public-{name}")
    game = new_game(spec.rules, spec.golden_players, f"det-public-{name}")
    stops = {max(1, int(len(full.history) * f)) for f in (0.0, 0.25, 0.5, 0.75, 1.0)}
    for n, (seat, cmd) in enumerate(full.history, start=1):
        game.apply(cmd, seat)
        if n not in stops:
            continue
        public = _public_state(game)
        public_doc, truth_doc = msgspec.to_builtins(public), msgspec.to_builtins(game.state)
        for i in range(2):
            rng = f"det-public-{n}-{i}"
            sample = spec.determinize(public, Rng.for_version(rng, 1))
            sample_doc = msgspec.to_builtins(sample)
            assert sample_doc == msgspec.to_builtins(spec.determinize(game.state, Rng.for_version(rng, 1))), n
            assert not _placeholders(sample_doc), f"{name}: a sample still hides something after move {n}"
            _compare(public_doc, truth_doc, sample_doc, name)
            views = [spec.rules.view(sample, s) for s in (None, *range(game.num_players))]
            assert views == _views(game), n
        # The fold is untouched.
        assert msgspec.to_builtins(public) == public_doc


@pytest.mark.parametrize("name", NAMES)
def test_the_search_bot_picks_the_same_move_whatever_it_cannot_see(name: str) -> None:
    # Two games alike in everything the searching seat sees (every view, the legal actions) but
    # for their secrets and future rolls: the hosted search, with the same seed, must choose alike.
    spec = SPECS[name]
    differed = 0
    for fraction in (0.2, 0.5, 0.8):
        truth = _mid_game(spec, f"unseen-{name}", fraction)
        if truth.is_terminal():
            continue
        twin = truth.clone(resample=True, rng_seed=f"twin-{fraction}")
        seat = truth.to_act()[0]
        assert _views(twin) == _views(truth) and twin.legal_actions(seat) == truth.legal_actions(seat)
        if len(truth.legal_actions(seat)) < 2:
            continue  # a forced move searches nothing
        # The seeds always differ; what counts is hidden state (a deck's order, a bag) differing.
        differed += msgspec.to_builtins(twin.state) != msgspec.to_builtins(truth.state)
        choices = []
        for g in (truth, twin):
            bot = searcher(spec, seed=7, iterations=40, seconds=None)
            choices.append(bot.choose_from(g, seat))
            assert bot.last_iterations == 40
        assert choices[0] == choices[1], f"{name} at {fraction}: {choices}"
    # A game that keeps no secrets differs in its future rolls only (the seeds always differ).
    assert differed or spec.determinize is None, f"{name}: the twins never differed in hidden state"


@pytest.mark.parametrize("name", NAMES)
def test_bots_over_a_copy_of_the_data_play_as_the_declared_ones(name: str, tmp_path: Path) -> None:
    # A game's bots over other data (an earlier file, a variant `dicestream balance --data`
    # measures) come from GameSpec.bots_on: over a copy of the current file they must choose, and
    # re-deal, exactly as the declared ones do over the catalog's rules.
    spec = SPECS[name]
    if spec.bots_on is None or spec.with_data is None:
        pytest.skip(f"{name} declares no bots over other data")
    copy = tmp_path / "copy.toml"
    copy.write_bytes((spec.package_dir / spec.data_files[0]).read_bytes())
    rules = spec.with_data(copy)
    assert rules is not spec.rules and rules.data_version == spec.rules.data_version
    kit = spec.bots_for(rules)
    assert kit is not None and set(kit.bots) == set(spec.bots)
    n = spec.golden_players
    pairs = [(kit.greedy, spec.greedy), *((kit.bots[k], spec.bots[k]) for k in spec.bots)]
    for copied, declared in pairs:
        ours = play(new_game(rules, n, f"copy-{name}"), [copied() for _ in range(n)])
        theirs = play(new_game(spec.rules, n, f"copy-{name}"), [declared() for _ in range(n)])
        assert ours.history == theirs.history
    if spec.determinize is None:
        return
    assert kit.determinize is not None
    theirs_mid = _mid_game(spec, f"copy-det-{name}", 0.5)
    ours_mid = new_game(rules, n, f"copy-det-{name}")
    for seat, cmd in theirs_mid.history:
        ours_mid.apply(cmd, seat)
    rng = "copy"
    assert kit.determinize(ours_mid.state, Rng.for_version(rng, 1)) == spec.determinize(
        theirs_mid.state, Rng.for_version(rng, 1)
    )
