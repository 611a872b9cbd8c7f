"""A factory's mechanics as pure functions of the data and one player's state: hole counts,
belt arrows (forks included), the run (bots moving to the first free hole, improvements
activating) and making bots. Nothing here changes the state; callers turn results into events.
"""

from __future__ import annotations

from contracts import mechanica as c
from games.mechanica.components import FLOOR_EFFECTS, FORK_DIRECTIONS, MechanicaData, follow
from games.mechanica.state import BASIC_FABRICATOR, BIG, EMPTY, HUGE, SMALL, PlayerState

FORK_ARROWS = tuple(FORK_DIRECTIONS.values())


def spot(data: MechanicaData, sq: int, hole: int) -> c.Spot:
    r, col = data.geometry.row_col(sq)
    return c.Spot(row=r + 1, col=col + 1, hole=hole + 1)


def hole_count(data: MechanicaData, area: str, tile: str) -> int:
    """Holes on a square of `area` holding `tile`."""
    if area == "start":
        return 1  # every start-zone square has one centre hole, fabricator or not
    if area == "dock":
        t = data.trucks
        sizes = {SMALL: t.small_capacity, BIG: t.big_capacity, HUGE: t.huge_capacity}
        if tile in sizes:
            return sizes[tile]
        return data.tiles[tile].capacity
    if area == "floor" and tile:
        kind = data.tiles[tile]
        return kind.inputs + kind.outputs
    return 0


def arrows(data: MechanicaData, p: PlayerState) -> list[str]:
    """The arrow bots follow out of each square: the fork's where one stands, else the printed one."""
    printed = data.geometry.arrow
    return [f or a for f, a in zip(p.forks, printed, strict=True)]


def fork_ok(data: MechanicaData, p: PlayerState, sq: int, arrow: str, current: list[str] | None = None) -> bool:
    """Would a fork on `sq` pointing `arrow` lead onto a square and keep the belt free of circles?

    Only paths through `sq` change, so checking the path from `sq` itself is enough. `current`
    is `arrows(data, p)` when the caller has it already (it is restored before returning)."""
    geo = data.geometry
    if geo.target(sq, arrow) is None:
        return False
    trial = current if current is not None else arrows(data, p)
    old = trial[sq]
    trial[sq] = arrow
    try:
        return follow(geo, trial, sq)
    finally:
        trial[sq] = old


def fork_options(data: MechanicaData, p: PlayerState) -> dict[int, list[str]]:
    """For every floor square, the arrows a fork there may show (exactly what `fork_ok` accepts).

    No belt arrow points left, so a bot that leaves a column never comes back to it: an arrow
    from `sq` makes a circle only if the belt from its target runs back to `sq` within the column."""
    geo = data.geometry
    current = arrows(data, p)
    out: dict[int, list[str]] = {}
    for sq in geo.floor_squares:
        ok: list[str] = []
        for arrow in FORK_ARROWS:
            t = geo.leads[arrow][sq]
            if t < 0:
                continue
            if arrow != ">":
                col = sq % geo.ncols
                while t != sq and geo.area[t] != "dock" and t % geo.ncols == col:
                    t = geo.leads[current[t]][t]
                if t == sq:
                    continue
            ok.append(arrow)
        out[sq] = ok
    return out


def is_fabricator(data: MechanicaData, tile: str) -> bool:
    return tile == BASIC_FABRICATOR or (tile in data.tiles and data.tiles[tile].effect == "fabricate")


def makes(data: MechanicaData, tile: str) -> tuple[str, str]:
    """(model made, model gifted to each other player or "") of a fabricator tile."""
    if tile == BASIC_FABRICATOR:
        return data.basic_model, ""
    kind = data.tiles[tile]
    return kind.makes, kind.gift


def free_start_rows(data: MechanicaData, p: PlayerState, after_making: bool = False) -> list[int]:
    """0-based rows of free start-zone holes, top first. With `after_making`, the holes the
    seat's own fabricators will fill at "make bots" are not free."""
    geo = data.geometry
    out: list[int] = []
    for sq in geo.start_squares:
        if p.holes[sq][0]:
            continue
        if after_making and is_fabricator(data, p.tiles[sq]):
            continue
        out.append(geo.row_col(sq)[0])
    return out


# ---- the run ----------------------------------------------------------------------------


def _distances(data: MechanicaData, arrow: list[str]) -> list[int]:
    """Belt steps from each square to the dock (the dock itself is 0; no square: -1)."""
    geo = data.geometry
    dist = [-1] * len(arrow)
    for sq in range(len(arrow)):
        if not geo.area[sq]:
            continue
        path: list[int] = []
        cur = sq
        while dist[cur] < 0 and geo.area[cur] != "dock":
            path.append(cur)
            nxt = geo.target(cur, arrow[cur])
            assert nxt is not None, "fork_ok keeps every belt leading to the dock"
            cur = nxt
        base = 0 if geo.area[cur] == "dock" else dist[cur]
        if geo.area[cur] == "dock":
            dist[cur] = 0
        for k, s in enumerate(reversed(path)):
            dist[s] = base + k + 1
    return dist


def run_moves(data: MechanicaData, p: PlayerState) -> list[tuple[int, int, int, int, str]]:
    """Step 1 of a run: (square, hole, to square, to hole, model) per bot that moves, in order.

    All bots move "at once": the bot nearest the dock along the belt moves first (so it frees its
    hole for the bots behind it); at equal distance the upper row first, and within a square the
    later hole first. Each bot moves once, to the first free hole after its own along the arrows;
    with none free all the way into its truck, it stays. Bots in trucks never move, nor do bots
    in an improvement's input holes: they wait there until it activates (an Assembler waiting for
    its other inputs), never moving on to a later hole of the same square."""
    geo = data.geometry
    arrow = arrows(data, p)
    dist = _distances(data, arrow)
    holes = [h[:] for h in p.holes]
    bots = [
        (dist[sq], geo.row_col(sq)[0], -h, sq, h)
        for sq in range(len(holes))
        if geo.area[sq] in ("start", "floor")
        for h, m in enumerate(holes[sq])
        if m and h >= input_holes(data, p.tiles[sq])
    ]
    bots.sort()
    moves: list[tuple[int, int, int, int, str]] = []
    for _, _, _, sq, h in bots:
        model = holes[sq][h]
        dest = _first_free(data, arrow, holes, sq, h)
        if dest is None:
            continue
        tsq, th = dest
        holes[sq][h] = EMPTY
        holes[tsq][th] = model
        moves.append((sq, h, tsq, th, model))
    return moves


def input_holes(data: MechanicaData, tile: str) -> int:
    """How many of the first holes of the square holding `tile` are input holes (floor improvements)."""
    kind = data.tiles.get(tile)
    return kind.inputs if kind is not None and kind.place == "floor" else 0


def _first_free(
    data: MechanicaData, arrow: list[str], holes: list[list[str]], sq: int, h: int
) -> tuple[int, int] | None:
    geo = data.geometry
    start = h + 1
    while True:
        row = holes[sq]
        for hh in range(start, len(row)):
            if not row[hh]:
                return sq, hh
        if geo.area[sq] == "dock":
            return None
        nxt = geo.target(sq, arrow[sq])
        assert nxt is not None
        sq, start = nxt, 0


def _step(data: MechanicaData, model: str, by: int) -> str | None:
    """The model `by` steps better (negative: worse), capped at the best; None below the worst."""
    i = data.models.index(model) + by
    if i < 0:
        return None
    return data.models[min(i, len(data.models) - 1)]


def activations(data: MechanicaData, seat: int, p: PlayerState) -> list[c.ImprovementActivated]:
    """Step 2 of a run, on the holes after step 1: every floor improvement holding bots in its
    input holes (an assembler: in all of them) activates, in reading order (top row first, left
    to right). Bots it makes go only into its own output holes, so no improvement feeds another
    during the same run and the order changes nothing but the order of the events."""
    geo = data.geometry
    out: list[c.ImprovementActivated] = []
    for sq in geo.floor_squares:
        tile = p.tiles[sq]
        if not tile:
            continue
        kind = data.tiles[tile]
        if kind.effect not in FLOOR_EFFECTS:
            continue
        holes = p.holes[sq]
        inputs = [(h, holes[h]) for h in range(kind.inputs) if holes[h]]
        if not inputs or (kind.effect == "assemble" and len(inputs) < kind.inputs):
            continue
        made: list[str] = []
        wallet = vault = 0
        for _, m in inputs:
            if kind.effect == "duplicate":
                made += [m, m]
            elif kind.effect == "upgrade":
                made.append(_step(data, m, 1) or m)
            elif kind.effect == "split":
                worse = _step(data, m, -1)
                made += [worse, worse] if worse else [m]
            elif kind.effect == "downgrade":
                worse = _step(data, m, -1)
                made += [worse] if worse else []
                wallet += kind.money
            elif kind.effect == "wrap":
                vault += data.value[m] + kind.money
        if kind.effect == "assemble":
            best = max(data.models.index(m) for _, m in inputs)
            made = [data.models[min(best + 1, len(data.models) - 1)]]
        free = [h for h in range(kind.inputs, kind.inputs + kind.outputs) if not holes[h]]
        placed = [c.PlacedBot(seat=seat, model=m, spot=spot(data, sq, h)) for m, h in zip(made, free, strict=False)]
        r, col = geo.row_col(sq)
        out.append(
            c.ImprovementActivated(
                seat=seat,
                row=r + 1,
                col=col + 1,
                improvement=tile,
                consumed=[spot(data, sq, h) for h, _ in inputs],
                consumed_models=[m for _, m in inputs],
                made=placed,
                lost=made[len(placed) :],
                wallet=wallet,
                vault=vault,
            )
        )
    return out


# ---- making bots --------------------------------------------------------------------------


def bots_made(data: MechanicaData, seat: int, players: list[PlayerState]) -> list[c.PlacedBot]:
    """Step 3 of a turn: each of `seat`'s fabricators (top to bottom) puts its bot into its
    centre hole if that is free; an Overactive one that made its bot then gives each other player
    (in turn order after `seat`) a bot in the first free hole of their start zone (top first), if
    any. A fabricator whose centre hole is occupied makes nothing and so gives nothing."""
    geo = data.geometry
    n = len(players)
    taken: set[tuple[int, int]] = set()
    out: list[c.PlacedBot] = []
    p = players[seat]
    for sq in geo.start_squares:
        tile = p.tiles[sq]
        if not is_fabricator(data, tile):
            continue
        if p.holes[sq][0]:
            continue  # blocked: no bot, no gifts (MEC-R10, MEC-R11)
        model, gift = makes(data, tile)
        out.append(c.PlacedBot(seat=seat, model=model, spot=spot(data, sq, 0)))
        if not gift:
            continue
        for k in range(1, n):
            other = (seat + k) % n
            for osq in geo.start_squares:
                if not players[other].holes[osq][0] and (other, osq) not in taken:
                    taken.add((other, osq))
                    out.append(c.PlacedBot(seat=other, model=gift, spot=spot(data, osq, 0)))
                    break
    return out
