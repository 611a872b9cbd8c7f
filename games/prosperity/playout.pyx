# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, auto_pickle=False
"""Prosperity's greedy playout in C: the search bot's rollout, the same moves and the same winner.

Why: the hosted search (games/mcts.py `searcher`) plays the greedy bot (games/prosperity/bots.py)
from each searched position to the end of the game, and those rollouts were 97% of a search
game's time (building a view, listing commands, folding events, valuing each purchase). A balance
run of the search mirror at 3 players cost 32-49 CPU-seconds a game, too dear to tune data
against (docs/rules/prosperity.md). Here a rollout keeps the state in C arrays, applies each
outcome directly, and values commands with the greedy bot's arithmetic in the same order, so the
floats, the ties and therefore the moves come out the same.

It is never the referee's and writes nothing: it reads a determinized state the search already
holds and returns who won. It must stay the same playout: tests/games/prosperity/test_playout.py
plays it against the Python rollout (rules, view and greedy bot) from hundreds of positions of
seeded games, on the shipped data and on edited copies, and a search game with and without it
picks every move the same. A change to the rules or to the greedy bot that this file does not
follow fails there.
"""

from libc.math cimport INFINITY

from games.prosperity import bots as greedy
from games.prosperity import fold
from games.prosperity import scoring as sc
from games.prosperity.components import COLOUR_OF, SYMBOLS
from games.prosperity.state import ACTIONS, COUNT, FINAL, HIDDEN_TILE

cdef enum:
    MAX_PLAYERS = 4
    MAX_TILES = 64
    MAX_SPACES = 16
    MAX_DECK = 64
    MAX_TRACK = 32       # prosperity symbols printed on a pollution track
    N_SYMBOLS = 5        # energy, ecology, capital, research, prosperity (components.SYMBOLS)
    N_BOARDS = 2
    # Values the data may hold: far inside a C int once summed over a game.
    VALUE_BOUND = 1 << 16

cdef enum:
    S_ENERGY = 0
    S_ECOLOGY = 1
    S_CAPITAL = 2
    S_RESEARCH = 3
    S_PROSPERITY = 4

cdef enum:
    P_COUNT = 1
    P_ACTIONS = 2
    P_FINAL = 3
    P_OVER = 4

# The rules' amounts and the greedy bot's weights, read from their modules once at import (C globals
# after that), so that a change there reaches the playout too.
cdef int ENERGY_GAIN = sc.ENERGY_GAIN
cdef int ENERGY_PAY = sc.ENERGY_PAY
cdef int ECOLOGY_REFUND = sc.ECOLOGY_REFUND
cdef int CAPITAL_GAIN = sc.CAPITAL_GAIN
cdef int INCOME = sc.INCOME
cdef int BASE_PRICE = sc.BASE_PRICE
cdef int PRICE_STEP = sc.PRICE_STEP
cdef int BELOW_PRICE = sc.BELOW_PRICE
cdef int CONVERSION = sc.CONVERSION
cdef int MAJORITY_FIRST = sc.MAJORITY_FIRST
cdef int MAJORITY_SECOND = sc.MAJORITY_SECOND
cdef int MAJORITY_TIE = sc.MAJORITY_TIE
cdef int ACTIONS_PER_TURN = fold.ACTIONS_PER_TURN
cdef double NEGATIVE_ENERGY = greedy.NEGATIVE_ENERGY
cdef double DISC_REMOVED = greedy.DISC_REMOVED
cdef double DISC_HELD = greedy.DISC_HELD
cdef int DANGER_MARGIN = greedy.DANGER_MARGIN
cdef double DANGER = greedy.DANGER
cdef double RESEARCH_SYMBOL = greedy.RESEARCH_SYMBOL
cdef double RESEARCH_STEP = greedy.RESEARCH_STEP
cdef double BALANCE = greedy.BALANCE
cdef double UNLOCK = greedy.UNLOCK
cdef int FINAL_COUNTS[N_SYMBOLS]
FINAL_COUNTS[:] = [greedy.FINAL_COUNTS[symbol] for symbol in SYMBOLS]
# Read from the rules' scoring like the amounts above, so a change to the final count reaches the playout.
cdef int FINAL_TIMES[N_SYMBOLS]
FINAL_TIMES[:] = [sc.count_times(symbol, True) for symbol in SYMBOLS]

_PHASES = {COUNT: P_COUNT, ACTIONS: P_ACTIONS, FINAL: P_FINAL}
_COLOURS = ("pink", "yellow", "green", "blue")


class NotNative(ValueError):
    """The data cannot be held by this playout (more components, or larger values, than it has room for)."""


cdef class Tables:
    """The component data as C arrays, and the ids that index them."""

    cdef int n_tiles
    cdef int side[MAX_TILES]          # 0 energy, 1 ecology
    cdef int level[MAX_TILES]
    cdef int colour[MAX_TILES]        # -1: special
    cdef int points[MAX_TILES]
    cdef int clean[MAX_TILES]
    cdef int sym[MAX_TILES][N_SYMBOLS]
    cdef int count[MAX_TILES]         # highlighted symbol, -1 none
    cdef int n_spaces[N_BOARDS]
    cdef int space_colour[N_BOARDS][MAX_SPACES]
    cdef int needs[N_BOARDS][MAX_SPACES]       # -1: none
    cdef int printed[N_BOARDS][MAX_SPACES][N_SYMBOLS]
    cdef int unlocks[N_BOARDS][MAX_SPACES]
    cdef int pollution_spaces[N_BOARDS]
    cdef int n_track[N_BOARDS]
    cdef int track[N_BOARDS][MAX_TRACK]
    cdef int research_top
    cdef int count_totals[N_SYMBOLS]
    cdef dict tile_index
    cdef dict board_index

    def __init__(self, data):
        tiles = list(data.tiles.values())
        boards = [data.boards[b] for b in data.board_ids]
        if len(tiles) > MAX_TILES or len(boards) > N_BOARDS:
            raise NotNative("more tiles or boards than the playout holds")
        if any(len(b.spaces) > MAX_SPACES or len(b.pollution_prosperity) > MAX_TRACK for b in boards):
            raise NotNative("a board with more spaces or track symbols than the playout holds")
        values = [data.research_top]
        for t in tiles:
            values += [t.level, t.points, t.clean, t.energy, t.ecology, t.capital, t.research, t.prosperity]
        for b in boards:
            values += [b.pollution_spaces, *b.pollution_prosperity]
            for s in b.spaces:
                if s.printed is not None:
                    f = s.printed
                    values += [f.energy, f.ecology, f.capital, f.research, f.prosperity]
        if any(type(v) is not int or not -VALUE_BOUND <= v <= VALUE_BOUND for v in values):
            raise NotNative(f"a value that is not an int within +-{VALUE_BOUND}")
        self.tile_index = {t.id: i for i, t in enumerate(tiles)}
        self.board_index = {b.id: i for i, b in enumerate(boards)}
        self.n_tiles = len(tiles)
        for i, t in enumerate(tiles):
            self.side[i] = 0 if t.side == "energy" else 1
            self.level[i] = t.level
            self.colour[i] = -1 if t.special else _COLOURS.index(COLOUR_OF[t.type])
            self.points[i] = t.points
            self.clean[i] = t.clean
            for k, v in enumerate((t.energy, t.ecology, t.capital, t.research, t.prosperity)):
                self.sym[i][k] = v
            self.count[i] = -1 if t.count is None else SYMBOLS.index(t.count)
        for b, board in enumerate(boards):
            index = {s.id: j for j, s in enumerate(board.spaces)}
            self.n_spaces[b] = len(board.spaces)
            for j, s in enumerate(board.spaces):
                self.space_colour[b][j] = _COLOURS.index(s.colour)
                self.needs[b][j] = index[s.needs] if s.needs else -1
                f = s.printed
                shown = (0, 0, 0, 0, 0) if f is None else (f.energy, f.ecology, f.capital, f.research, f.prosperity)
                for k, v in enumerate(shown):
                    self.printed[b][j][k] = v
                self.unlocks[b][j] = sum(1 for o in board.spaces if o.needs == s.id)
            self.pollution_spaces[b] = board.pollution_spaces
            self.n_track[b] = len(board.pollution_prosperity)
            for k, n in enumerate(board.pollution_prosperity):
                self.track[b][k] = n
        self.research_top = data.research_top
        for k, symbol in enumerate(SYMBOLS):
            self.count_totals[k] = data.count_totals[symbol]


cdef struct Player:
    int board
    long long money
    long long discs
    long long points
    long long r[2]
    long long energy
    long long ecology
    int top[MAX_SPACES]     # the top tile of each space, -1 when nothing was bought there


cdef struct Game:
    int n
    int phase
    int active
    int symbol
    int queue[MAX_PLAYERS]
    int queue_len
    int actions_left
    int deck[MAX_DECK]
    int deck_len
    int deck_next
    int last_drawn           # the tile being counted, filed once every seat has counted it
    int board[MAX_TILES]     # the research board, in order
    int board_len
    int left[N_SYMBOLS]      # counts still to come: the view's counts_left
    Player players[MAX_PLAYERS]
    long long forced


cdef struct Shown:
    long long s[N_SYMBOLS]


cdef inline long long _min(long long a, long long b):
    return a if a < b else b


cdef inline long long _max(long long a, long long b):
    return a if a > b else b


cdef Shown _shown(Tables t, Player* p):
    cdef Shown out
    cdef int j, k, b = p.board, tile
    for k in range(N_SYMBOLS):
        out.s[k] = 0
    for j in range(t.n_spaces[b]):
        tile = p.top[j]
        if tile >= 0:
            for k in range(N_SYMBOLS):
                out.s[k] += t.sym[tile][k]
        else:
            for k in range(N_SYMBOLS):
                out.s[k] += t.printed[b][j][k]
    return out


cdef inline bint _polluted(Tables t, int b, long long discs):
    return discs > t.pollution_spaces[b]


cdef inline long long _track(Tables t, int b, long long discs):
    cdef long long n = 0
    cdef int k
    for k in range(t.n_track[b]):
        if t.track[b][k] > discs:
            n += 1
    return n


cdef inline long long _price(int level, long long marker):
    if level < marker:
        return BELOW_PRICE
    return BASE_PRICE + PRICE_STEP * (level - marker)


# ---- the greedy bot's value (games/prosperity/bots.py `_Valuer.__call__`, same operations in order)

cdef struct Valuer:
    int board
    long long left[N_SYMBOLS]


cdef double _value(Tables t, Valuer* w, long long money, long long discs, long long points, long long r0,
                   long long r1, long long energy, long long ecology, long long capital, long long symbols,
                   long long prosperity, long long unlocked):
    cdef double v = <double>points + <double>money / <double>CONVERSION
    cdef double per_level
    cdef long long over
    cdef int b = w.board
    if energy >= 0:
        v += <double>(energy * ENERGY_GAIN) / <double>CONVERSION * <double>w.left[S_ENERGY]
    else:
        v += <double>energy * NEGATIVE_ENERGY * <double>w.left[S_ENERGY]
    v += <double>(capital * CAPITAL_GAIN) / <double>CONVERSION * <double>w.left[S_CAPITAL]
    if discs > 0 or ecology < 0:
        per_level = DISC_REMOVED
    else:
        per_level = <double>ECOLOGY_REFUND / <double>CONVERSION
    v += <double>ecology * per_level * <double>w.left[S_ECOLOGY]
    v += <double>symbols * RESEARCH_SYMBOL * <double>(w.left[S_RESEARCH] + 1)
    v += RESEARCH_STEP * <double>(r0 + r1) + BALANCE * <double>_min(r0, r1)
    if not _polluted(t, b, discs):
        v += <double>((prosperity + _track(t, b, discs)) * w.left[S_PROSPERITY])
    v -= DISC_HELD * <double>discs
    over = discs - (t.pollution_spaces[b] - DANGER_MARGIN)
    if over > 0:
        v -= DANGER * <double>over
    return v + UNLOCK * <double>unlocked


cdef void _valuer(Game* g, Player* p, Valuer* w):
    cdef int k
    w.board = p.board
    for k in range(N_SYMBOLS):
        w.left[k] = g.left[k] + FINAL_COUNTS[k]


# ---- counts (games/prosperity/rules.py `_count`, `_advance`, `_finish`) ----------------------

cdef inline bint _energy_choice(Player* p, int times, long long* lowest, long long* levels):
    """The negative energy count's disc choices lowest..levels; True when there is more than one."""
    levels[0] = -p.energy * times
    lowest[0] = _max(0, levels[0] - p.money // ENERGY_PAY)
    return levels[0] - lowest[0] + 1 > 1


cdef inline void _research_range(Tables t, Player* p, long long steps, long long* lo, long long* hi):
    cdef long long room_e = t.research_top - p.r[0], room_c = t.research_top - p.r[1]
    if steps >= room_e + room_c:
        lo[0] = room_e
        hi[0] = room_e
    else:
        lo[0] = _max(0, steps - room_c)
        hi[0] = _min(steps, room_e)


cdef inline void _settle_energy(Player* p, int times, long long discs):
    cdef long long levels = -p.energy * times
    p.money -= ENERGY_PAY * (levels - discs)
    p.discs += discs


cdef inline void _split(Tables t, Player* p, long long steps, long long share):
    cdef long long e = _min(share, t.research_top - p.r[0]), k = _min(steps - share, t.research_top - p.r[1])
    p.r[0] += e
    p.r[1] += k


cdef bint _count(Tables t, Game* g, int seat, int symbol, bint final):
    """Count `symbol` for `seat` unless it must choose (then False, nothing changed)."""
    cdef Player* p = &g.players[seat]
    cdef int times = FINAL_TIMES[symbol] if final else 1
    cdef long long lowest = 0, levels = 0, lo = 0, hi = 0, removed
    cdef Shown shown
    if symbol == S_ENERGY:
        if p.energy >= 0:
            p.money += ENERGY_GAIN * p.energy * times
            return True
        if _energy_choice(p, times, &lowest, &levels):
            return False
        _settle_energy(p, times, lowest)
        return True
    if symbol == S_ECOLOGY:
        levels = p.ecology * times
        if levels >= 0:
            removed = _min(levels, p.discs)
            p.discs -= removed
            p.money += ECOLOGY_REFUND * (levels - removed)
        else:
            p.discs += -levels
        return True
    shown = _shown(t, p)
    if symbol == S_CAPITAL:
        p.money += CAPITAL_GAIN * shown.s[S_CAPITAL]
        return True
    if symbol == S_RESEARCH:
        if final:
            p.r[0] += _min(shown.s[S_RESEARCH], t.research_top - p.r[0])
            p.r[1] += _min(shown.s[S_RESEARCH], t.research_top - p.r[1])
            return True
        _research_range(t, p, shown.s[S_RESEARCH], &lo, &hi)
        if hi > lo:
            return False
        _split(t, p, shown.s[S_RESEARCH], lo)
        return True
    if not _polluted(t, p.board, p.discs):
        p.points += shown.s[S_PROSPERITY] + _track(t, p.board, p.discs)
    return True


cdef void _advance(Tables t, Game* g):
    while g.queue_len > 0:
        if not _count(t, g, g.queue[0], g.symbol, g.phase == P_FINAL):
            return
        _pop(g)
    if g.phase == P_COUNT:
        g.board[g.board_len] = g.last_drawn
        g.board_len += 1
        g.phase = P_ACTIONS
        g.symbol = -1
        g.actions_left = ACTIONS_PER_TURN
    elif g.phase == P_FINAL:
        _finish(t, g)


cdef inline void _pop(Game* g):
    cdef int k
    for k in range(1, g.queue_len):
        g.queue[k - 1] = g.queue[k]
    g.queue_len -= 1


cdef void _queue_from(Game* g, int seat):
    cdef int k
    for k in range(g.n):
        g.queue[k] = (seat + k) % g.n
    g.queue_len = g.n


cdef void _draw(Tables t, Game* g, int seat):
    cdef int tile = g.deck[g.deck_next], k
    g.deck_next += 1
    g.last_drawn = tile
    k = t.count[tile]
    if k >= 0:
        g.left[k] -= 1
    g.active = seat
    g.phase = P_COUNT
    g.symbol = k
    g.actions_left = 0
    _queue_from(g, seat)
    _advance(t, g)


cdef void _end_turn(Tables t, Game* g):
    g.actions_left = 0
    if g.deck_next < g.deck_len:
        _draw(t, g, (g.active + 1) % g.n)
        return
    g.phase = P_FINAL
    g.symbol = S_ENERGY
    _queue_from(g, g.active)
    _advance(t, g)


cdef void _finish(Tables t, Game* g):
    cdef int k, seat, n = g.n, track, best
    cdef long long converted
    cdef long long pos[MAX_PLAYERS]
    cdef long long first, second
    cdef int n_first, n_second
    for k in range(n):
        _count(t, g, (g.active + k) % n, S_ECOLOGY, True)
    for k in range(n):
        _count(t, g, (g.active + k) % n, S_CAPITAL, True)
    for k in range(n):
        seat = (g.active + k) % n
        converted = g.players[seat].money // CONVERSION
        g.players[seat].money -= converted * CONVERSION
        g.players[seat].points += converted
    for k in range(n):
        _count(t, g, (g.active + k) % n, S_RESEARCH, True)
    # Research majorities (scoring.majority): first / second; a tie for first the tie points each and
    # no second; a tie for second nobody.
    for track in range(2):
        for k in range(n):
            pos[k] = g.players[k].r[track]
        first = pos[0]
        for k in range(n):
            first = _max(first, pos[k])
        n_first = 0
        for k in range(n):
            if pos[k] == first:
                n_first += 1
        if n_first > 1:
            for k in range(n):
                if pos[k] == first:
                    g.players[k].points += MAJORITY_TIE
            continue
        best = -1
        second = 0
        for k in range(n):
            if pos[k] == first:
                g.players[k].points += MAJORITY_FIRST
            elif best < 0 or pos[k] > second:
                second = pos[k]
                best = k
        if best >= 0:
            n_second = 0
            for k in range(n):
                if pos[k] == second:
                    n_second += 1
            if n_second == 1:
                g.players[best].points += MAJORITY_SECOND
    for k in range(n):
        _count(t, g, (g.active + k) % n, S_PROSPERITY, True)
    g.phase = P_OVER
    g.queue_len = 0


# ---- the greedy bot's choices (games/prosperity/bots.py `GreedyBot.choose`) ------------------

cdef void _choose_count(Tables t, Game* g):
    """The waiting seat's count choice, greedy's, applied; then the count goes on."""
    cdef int seat = g.queue[0]
    cdef Player* p = &g.players[seat]
    cdef Valuer w
    cdef Shown shown = _shown(t, p)
    cdef bint final = g.phase == P_FINAL
    cdef int times = FINAL_TIMES[S_ENERGY] if final else 1  # the choice is energy's (research's takes no times)
    cdef long long lowest = 0, levels = 0, lo = 0, hi = 0, k, choice = 0, de, dc, steps
    cdef double v, best = -INFINITY
    _valuer(g, p, &w)
    if g.symbol == S_ENERGY:
        _energy_choice(p, times, &lowest, &levels)
        for k in range(lowest, levels + 1):
            v = _value(t, &w, p.money - ENERGY_PAY * (levels - k), p.discs + k, p.points, p.r[0], p.r[1],
                       p.energy, p.ecology, shown.s[S_CAPITAL], shown.s[S_RESEARCH], shown.s[S_PROSPERITY], 0)
            if v > best:
                best = v
                choice = k
        _settle_energy(p, times, choice)
    else:
        steps = shown.s[S_RESEARCH]
        _research_range(t, p, steps, &lo, &hi)
        for k in range(lo, hi + 1):
            de = _min(k, t.research_top - p.r[0])
            dc = _min(steps - k, t.research_top - p.r[1])
            v = _value(t, &w, p.money, p.discs, p.points, p.r[0] + de, p.r[1] + dc, p.energy, p.ecology,
                       shown.s[S_CAPITAL], steps, shown.s[S_PROSPERITY], 0)
            if v > best:
                best = v
                choice = k
        _split(t, p, steps, choice)
    _pop(g)
    _advance(t, g)


cdef void _act(Tables t, Game* g):
    """The active seat's action, greedy's over the legal list in the rules' order, applied."""
    cdef int seat = g.active
    cdef Player* p = &g.players[seat]
    cdef int b = p.board
    cdef Valuer w
    cdef Shown shown = _shown(t, p)
    cdef double v, best = -INFINITY
    cdef int legal = 0, kind = -1, arg = -1, arg2 = -1, i, j, tile, e
    cdef long long cost, money = p.money, discs = p.discs, r0 = p.r[0], r1 = p.r[1]
    cdef long long capital = shown.s[S_CAPITAL], symbols = shown.s[S_RESEARCH], prosperity = shown.s[S_PROSPERITY]
    cdef int face[N_SYMBOLS]
    _valuer(g, p, &w)
    # Income, CleanUp (with a disc on the track), Research per track below the top: kinds 0, 1, 2.
    legal += 1
    v = _value(t, &w, money + INCOME, discs, p.points, r0, r1, p.energy, p.ecology, capital, symbols, prosperity, 0)
    if v > best:
        best, kind = v, 0
    if discs > 0:
        legal += 1
        v = _value(t, &w, money, discs - 1, p.points, r0, r1, p.energy, p.ecology, capital, symbols, prosperity, 0)
        if v > best:
            best, kind = v, 1
    for e in range(2):
        if p.r[e] < t.research_top:
            legal += 1
            v = _value(t, &w, money, discs, p.points, r0 + (e == 0), r1 + (e == 1), p.energy, p.ecology, capital,
                       symbols, prosperity, 0)
            if v > best:
                best, kind, arg = v, 2, e
    # BuyTile: the research board in order, each tile on each open space of its colour in board order.
    for i in range(g.board_len):
        tile = g.board[i]
        cost = _price(t.level[tile], p.r[t.side[tile]])
        if cost > money:
            continue
        if t.colour[tile] < 0:
            legal += 1
            v = _value(t, &w, money - cost, discs - _min(t.clean[tile], discs), p.points + t.points[tile], r0, r1,
                       p.energy, p.ecology, capital, symbols, prosperity, 0)
            if v > best:
                best, kind, arg, arg2 = v, 3, i, -1
            continue
        for j in range(t.n_spaces[b]):
            if t.space_colour[b][j] != t.colour[tile]:
                continue
            if t.needs[b][j] >= 0 and p.top[t.needs[b][j]] < 0:
                continue
            legal += 1
            if p.top[j] >= 0:
                for e in range(N_SYMBOLS):
                    face[e] = t.sym[p.top[j]][e]
            else:
                for e in range(N_SYMBOLS):
                    face[e] = t.printed[b][j][e]
            v = _value(
                t, &w, money - cost, discs, p.points, r0, r1,
                p.energy + t.sym[tile][S_ENERGY] - face[S_ENERGY],
                p.ecology + t.sym[tile][S_ECOLOGY] - face[S_ECOLOGY],
                capital + t.sym[tile][S_CAPITAL] - face[S_CAPITAL],
                symbols + t.sym[tile][S_RESEARCH] - face[S_RESEARCH],
                prosperity + t.sym[tile][S_PROSPERITY] - face[S_PROSPERITY],
                t.unlocks[b][j] if p.top[j] < 0 else 0,
            )
            if v > best:
                best, kind, arg, arg2 = v, 3, i, j
    if legal == 1:
        # The Python rollout draws from the search's generator for a forced move: the caller does too.
        g.forced += 1
    if kind == 0:
        p.money += INCOME
    elif kind == 1:
        p.discs -= 1
    elif kind == 2:
        p.r[arg] += 1
    else:
        tile = g.board[arg]
        p.money -= _price(t.level[tile], p.r[t.side[tile]])
        for i in range(arg + 1, g.board_len):
            g.board[i - 1] = g.board[i]
        g.board_len -= 1
        if arg2 < 0:
            p.points += t.points[tile]
            p.discs -= _min(t.clean[tile], p.discs)
        else:
            p.top[arg2] = tile
            shown = _shown(t, p)
            p.energy = shown.s[S_ENERGY]
            p.ecology = shown.s[S_ECOLOGY]
    g.actions_left -= 1
    if g.actions_left <= 0:
        _end_turn(t, g)


# ---- entry ------------------------------------------------------------------------------------

cdef bint _waits(Tables t, Game* g):
    """Whether the loaded position waits as the rules leave one: on a count's real choice (PRO-R2)
    or on one of the active seat's two actions."""
    cdef Player* p
    cdef long long lowest = 0, levels = 0, lo = 0, hi = 0
    if g.phase == P_ACTIONS:
        return 1 <= g.actions_left <= ACTIONS_PER_TURN and g.queue_len == 0
    if g.queue_len < 1:
        return False
    p = &g.players[g.queue[0]]
    if g.symbol == S_ENERGY:
        return p.energy < 0 and _energy_choice(p, FINAL_TIMES[S_ENERGY] if g.phase == P_FINAL else 1, &lowest, &levels)
    if g.symbol == S_RESEARCH and g.phase == P_COUNT:
        _research_range(t, p, _shown(t, p).s[S_RESEARCH], &lo, &hi)
        return hi > lo
    return False


cdef bint _load(Tables t, object state, Game* g) except -1:
    """`state` (games/prosperity/state.py) as C arrays; False for what the playout does not take."""
    cdef int k, j
    phase = _PHASES.get(state.phase)
    if phase is None or state.over:
        return False
    n = state.num_players
    deck, board = len(state.deck), len(state.research_board)
    # The research board grows by the deck's tiles: both must fit its array.
    if not 2 <= n <= MAX_PLAYERS or len(state.players) != n or deck > MAX_DECK or board + deck > MAX_TILES:
        return False
    if not 0 <= state.active < n or len(state.queue) > n or any(not 0 <= seat < n for seat in state.queue):
        return False
    if state.symbol and state.symbol not in SYMBOLS:
        return False
    index = t.tile_index
    g.n = n
    g.phase = phase
    g.active = state.active
    g.symbol = SYMBOLS.index(state.symbol) if state.symbol else -1
    g.queue_len = len(state.queue)
    for k, seat in enumerate(state.queue):
        g.queue[k] = seat
    g.actions_left = state.actions_left
    g.deck_len = len(state.deck)
    g.deck_next = 0
    for k, tid in enumerate(state.deck):
        if tid == HIDDEN_TILE or tid not in index:
            return False
        g.deck[k] = index[tid]
    if phase == P_COUNT and not state.drawn:
        return False
    g.board_len = len(state.research_board)
    for k, tid in enumerate(state.research_board):
        if tid not in index:
            return False
        g.board[k] = index[tid]
    for k in range(N_SYMBOLS):
        g.left[k] = t.count_totals[k]
    for tid in state.drawn:
        if tid not in index:
            return False
        k = t.count[index[tid]]
        if k >= 0:
            g.left[k] -= 1
    g.last_drawn = index[state.drawn[len(state.drawn) - 1]] if state.drawn else -1
    for k, pl in enumerate(state.players):
        if pl.side not in t.board_index or len(pl.stacks) != t.n_spaces[t.board_index[pl.side]]:
            return False
        if pl.money < 0 or pl.discs < 0 or any(not 0 <= r <= t.research_top for r in pl.research):
            return False
        g.players[k].board = t.board_index[pl.side]
        g.players[k].money = pl.money
        g.players[k].discs = pl.discs
        g.players[k].points = pl.points
        g.players[k].r[0] = pl.research[0]
        g.players[k].r[1] = pl.research[1]
        g.players[k].energy = pl.energy
        g.players[k].ecology = pl.ecology
        for j, stack in enumerate(pl.stacks):
            if stack and stack[len(stack) - 1] not in index:
                return False
            g.players[k].top[j] = index[stack[len(stack) - 1]] if stack else -1
    g.forced = 0
    return _waits(t, g)


def playout(Tables tables, state):
    """Play `state` (a Prosperity state waiting on a count's choice or an action) to the end with the
    greedy bot in every seat. Returns (winners, forced moves, points, money left), or None for a
    state it does not take (set-up, over, a hidden deck, a position the rules do not leave). `state`
    is not changed."""
    cdef Game g
    cdef int k, best
    if not _load(tables, state, &g):
        return None
    while g.phase != P_OVER:
        if g.phase == P_ACTIONS:
            _act(tables, &g)
        else:
            _choose_count(tables, &g)
    best = 0
    for k in range(1, g.n):
        if (g.players[k].points, g.players[k].money) > (g.players[best].points, g.players[best].money):
            best = k
    winners = [k for k in range(g.n)
               if g.players[k].points == g.players[best].points and g.players[k].money == g.players[best].money]
    return winners, g.forced, [g.players[k].points for k in range(g.n)], [g.players[k].money for k in range(g.n)]
