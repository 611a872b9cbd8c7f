# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, auto_pickle=False, cdivision=True
"""Artifacts, Inc.'s greedy playout in C: the search bot's rollout, the same moves and the same winner.

Why: the hosted search (games/mcts.py `searcher`) plays the greedy bot (games/artifacts/bots.py)
from each searched position to the end of the game, and those rollouts were most of a search
game's time (building a view, listing hundreds of commands, folding events, valuing each of them).
A 4-player search mirror cost 100-140 CPU-seconds a game, so screening one data variant over 100
games cost 3-4 CPU-hours (docs/rules/artifacts.md, "Seat balance"). Here a rollout keeps the state
in C arrays, applies each outcome directly, and values commands with the greedy bot's arithmetic in
the order the rules list them, so the floats, the ties and therefore the moves come out the same.

The dice are the rules' own: a turn's roll is drawn from `Rng.for_version(seed, version)` of the
command that starts the turn (docs/fairness.md), so the playout counts the events each command
writes, as the referee's log would.

It is never the referee's and writes nothing: it reads a determinized state the search already
holds and returns who won. It must stay the same playout: tests/games/artifacts/test_playout.py
plays it against the Python rollout (rules, view and greedy bot) from hundreds of positions of
seeded games, on the shipped data, the earlier data and an edited copy, and a search game with and
without it picks every move the same. A change to the rules or to the greedy bot that this file
does not follow fails there.
"""

from libc.stdlib cimport abs as c_abs

from contracts import artifacts as wire
from contracts.limits import MAX_LIST, MAX_WORD
from games.artifacts import bots as greedy
from games.artifacts.legal import EXACT_SALES
from games.artifacts.components import CATEGORIES, FINDS, KINDS, MARKET_DECKS
from games.artifacts.state import HIDDEN_CARD, PLAY
from games.rng import Rng

cdef enum:
    MAX_PLAYERS = 4
    MAX_ASSETS = 64
    MAX_ACTIONS = 8
    MAX_ABILITIES = 8
    MAX_PUBLIC = 16       # public action slots, the museums' included
    MAX_MUSEUMS = 4
    MAX_BOXES = 16
    MAX_UNDER = 32
    MAX_OWNED = 48
    MAX_DECK = 48
    MAX_SLOTS = 8
    N_DECKS = 5
    N_KINDS = 4
    N_CATS = 5            # the four categories, then "any"
    N_FINDS = 4           # the three finds, then "any"
    MAX_DICE = 16
    MAX_PLACES = 3 * MAX_OWNED
    MAX_MARKET = N_DECKS * MAX_SLOTS
    # Values the data may hold. Sums over a game (dollars, cubes, reputation) are long long: a game
    # may last VALUE_BOUND rounds, each paying up to about VALUE_BOUND squared.
    VALUE_BOUND = 1 << 16

cdef enum:
    E_ARTIFACT = 0
    E_ARTIFACT_ADJ = 1
    E_DOLLARS = 2
    E_DOLLARS_ADJ = 3
    E_DOLLARS_FINDS = 4
    E_BUY = 5
    E_MUSEUM = 6
    E_COLLECTORS = 7

cdef enum:
    C_END = 0
    C_USE = 1
    C_BUY = 2
    C_UPGRADE = 3
    C_MUSEUM = 4
    C_COLLECTORS = 5
    C_DIVE = 6

_EFFECTS = {
    "artifact": E_ARTIFACT, "artifact_adjacent": E_ARTIFACT_ADJ, "dollars": E_DOLLARS,
    "dollars_adjacent": E_DOLLARS_ADJ, "dollars_finds": E_DOLLARS_FINDS, "buy": E_BUY,
    "museum": E_MUSEUM, "collectors": E_COLLECTORS,
}
_CATEGORY = {**{name: i for i, name in enumerate(CATEGORIES)}, "any": 4, "": 4}
_FIND = {**{name: i for i, name in enumerate(FINDS)}, "any": 3, "": 3}
_KIND = {**{name: i for i, name in enumerate(KINDS)}, "": 0}

# The greedy bot's weights, read from its module once at import (C globals after that), so that a
# change there reaches the playout too.
cdef double DOLLAR = greedy.DOLLAR
cdef double DIE_DOLLARS = greedy.DIE_DOLLARS
cdef double ENGINE_SHARE = greedy.ENGINE_SHARE
cdef double DIVE_DIE = greedy.DIVE_DIE
cdef double MAJORITY_ODDS = greedy.MAJORITY_ODDS
cdef double PIP = greedy.PIP
cdef double ARTIFACT_DOLLARS[N_KINDS]
ARTIFACT_DOLLARS[:] = [greedy.ARTIFACT_DOLLARS[k] for k in KINDS]
cdef int SCROLL = KINDS.index("scroll")
cdef long long EXACT = EXACT_SALES  # a C value: read on every Private Collectors slot
# What a loaded state may hold (dollars, cubes, reputation, the round): larger ones roll out in Python.
cdef long long STATE_BOUND = 1LL << 40


class NotNative(ValueError):
    """The data cannot be held by this playout (more components, or larger values, than it has room for)."""


cdef struct Act:
    int effect
    int need            # bit v set: a die showing v meets the requirement
    int kind
    int amount
    int per
    int category
    int find


cdef struct Face:
    int reputation
    int adventurers
    int n_actions
    Act actions[MAX_ACTIONS]
    int n_abilities
    int ab_adjacent[MAX_ABILITIES]      # 1: rep_adjacent (by category), 0: rep_finds (by find)
    int ab_per[MAX_ABILITIES]
    int ab_category[MAX_ABILITIES]
    int ab_find[MAX_ABILITIES]


cdef int _need_mask(frozenset faces):
    cdef int mask = 0
    for v in faces:
        mask |= 1 << v
    return mask


cdef class Tables:
    """The component data as C arrays, and the ids that index them."""

    cdef int n_assets
    cdef Face faces[MAX_ASSETS][2]
    cdef int category[MAX_ASSETS]
    cdef int cost[MAX_ASSETS]
    cdef int scrolls[MAX_ASSETS]
    cdef int n_public
    cdef Act public[MAX_PUBLIC]
    cdef int public_museum[MAX_PUBLIC]   # the museum a slot sells to, -1 for the other public cards
    cdef int n_museums
    cdef int museum_kind[MAX_MUSEUMS]
    cdef int museum_bonus[MAX_MUSEUMS]
    cdef int museum_majority[MAX_MUSEUMS]
    cdef int n_orders[2][MAX_MUSEUMS]    # per side (0: 2p, 1: 3p)
    cdef int orders[2][MAX_MUSEUMS][MAX_BOXES]
    cdef int n_under
    cdef int under_number[MAX_UNDER]
    cdef int under_find[MAX_UNDER]
    cdef int end_reputation
    cdef int max_rounds
    cdef int dice_in_box
    cdef int dive_reputation
    cdef int collectors_amount
    cdef int collectors_per
    cdef dict asset_index
    cdef dict museum_index
    cdef dict under_index
    cdef dict public_slot       # "card#action" of a public card -> its slot
    cdef dict needs
    cdef list asset_ids
    cdef list museum_ids
    cdef list public_ids        # per public slot: (card id, action number)

    def __init__(self, data):
        assets = list(data.assets.values())
        museums = [data.museums[m] for m in data.museum_ids]
        public = [(pid, i + 1, a) for pid in data.public_ids for i, a in enumerate(data.actions_of(pid, 1))]
        under = list(data.underwater.values())
        if len(assets) > MAX_ASSETS or len(museums) > MAX_MUSEUMS or len(public) > MAX_PUBLIC:
            raise NotNative("more cards, museums or public actions than the playout holds")
        if len(under) > MAX_UNDER or any(len(m.boxes_2p) > MAX_BOXES or len(m.boxes_3p) > MAX_BOXES for m in museums):
            raise NotNative("more underwater cards or order boxes than the playout holds")
        faces = [f for a in assets for f in (a.lv1, a.lv2)]
        if any(len(f.actions) > MAX_ACTIONS or len(f.abilities) > MAX_ABILITIES for f in faces):
            raise NotNative("a face with more actions or abilities than the playout holds")
        if any(n > MAX_SLOTS for n in data.table.market_slots.values()) or data.table.dice_in_box > MAX_DICE:
            raise NotNative("more market slots or dice than the playout holds")
        if any(len(cards) > MAX_DECK for cards in data.decks.values()):
            raise NotNative("a deck longer than the playout holds")
        # What a command may carry (contracts/limits.py): the Python rules refuse a longer Dive or id
        # as malformed, which the playout would not.
        if data.table.dice_in_box > MAX_LIST:
            raise NotNative(f"more than {MAX_LIST} dice in the box: a Dive with them is not a valid command")
        ids = [a.id for a in assets] + list(data.public_ids) + [u.id for u in under]
        if any(len(x) > MAX_WORD for x in ids):
            raise NotNative(f"an id longer than {MAX_WORD} characters: a command naming it is not valid")
        t = data.table
        values = [t.end_reputation, t.max_rounds, t.dice_in_box, t.dive_reputation]
        for a in assets:
            values += [a.cost, a.scrolls]
            for f in (a.lv1, a.lv2):
                values += [f.reputation, f.adventurers]
                values += [x for act in f.actions for x in (act.amount, act.per)]
                values += [ab.per for ab in f.abilities]
        for m in museums:
            values += [m.bonus, m.majority, *m.boxes_2p, *m.boxes_3p]
        values += [x for _, _, act in public for x in (act.amount, act.per)]
        values += [u.number for u in under]
        if any(type(v) is not int or not -VALUE_BOUND <= v <= VALUE_BOUND for v in values):
            raise NotNative(f"a value that is not an int within +-{VALUE_BOUND}")
        self.needs = {need: _need_mask(faces_met) for need, faces_met in data.needs.items()}
        self.asset_index = {a.id: i for i, a in enumerate(assets)}
        self.museum_index = {m.id: i for i, m in enumerate(museums)}
        self.under_index = {u.id: i for i, u in enumerate(under)}
        self.public_slot = {f"{pid}#{n}": k for k, (pid, n, _) in enumerate(public)}
        self.asset_ids = [a.id for a in assets]
        self.museum_ids = [m.id for m in museums]
        self.public_ids = [(pid, n) for pid, n, _ in public]
        self.n_assets = len(assets)
        for i, a in enumerate(assets):
            self.category[i] = _CATEGORY[a.category]
            self.cost[i] = a.cost
            self.scrolls[i] = a.scrolls
            self._face(&self.faces[i][0], a.lv1)
            self._face(&self.faces[i][1], a.lv2)
        self.n_public = len(public)
        for k, (pid, _, act) in enumerate(public):
            self._act(&self.public[k], act)
            self.public_museum[k] = self.museum_index.get(pid, -1)
        self.n_museums = len(museums)
        for i, m in enumerate(museums):
            self.museum_kind[i] = _KIND[m.kind]
            self.museum_bonus[i] = m.bonus
            self.museum_majority[i] = m.majority
            for side, boxes in enumerate((m.boxes_2p, m.boxes_3p)):
                self.n_orders[side][i] = len(boxes)
                for b, count in enumerate(boxes):
                    self.orders[side][i][b] = count
        self.n_under = len(under)
        for i, u in enumerate(under):
            self.under_number[i] = u.number
            self.under_find[i] = _FIND[u.find]
        self.end_reputation = t.end_reputation
        self.max_rounds = t.max_rounds
        self.dice_in_box = t.dice_in_box
        self.dive_reputation = t.dive_reputation
        pid, slot = data.collectors
        act = data.actions_of(pid, 1)[slot - 1]
        self.collectors_amount = act.amount
        self.collectors_per = act.per

    cdef void _act(self, Act* out, act):
        out.effect = _EFFECTS[act.effect]
        out.need = self.needs[act.die]
        out.kind = _KIND[act.kind]
        out.amount = act.amount
        out.per = act.per
        out.category = _CATEGORY[act.category]
        out.find = _FIND[act.find]

    cdef void _face(self, Face* out, face):
        out.reputation = face.reputation
        out.adventurers = face.adventurers
        out.n_actions = len(face.actions)
        for k, act in enumerate(face.actions):
            self._act(&out.actions[k], act)
        out.n_abilities = len(face.abilities)
        for k, ab in enumerate(face.abilities):
            out.ab_adjacent[k] = ab.effect == "rep_adjacent"
            out.ab_per[k] = ab.per
            out.ab_category[k] = _CATEGORY[ab.category]
            out.ab_find[k] = _FIND[ab.find]


cdef struct Owned:
    int card
    int level
    int row
    int col


cdef struct Player:
    int n_cards
    Owned cards[MAX_OWNED]
    long long dollars
    long long artifacts[N_KINDS]
    int n_under
    int under[MAX_UNDER]
    long long reputation


cdef struct Game:
    int n
    int order[MAX_PLAYERS]
    int current
    int round
    bint triggered
    bint over
    int dice[7]                 # unplaced dice: how many show each value 1..6
    int n_dice
    int used_own[MAX_ASSETS]    # bit k: the current seat's card's action k+1 holds a die this turn
    bint used_public[MAX_PUBLIC]
    bint dived
    int side                    # museums: 0 the 2-player side, 1 the 3-4-player side
    int boxes[MAX_MUSEUMS][MAX_BOXES]   # the seat whose cube fills a box, -1 none
    int n_market[N_DECKS]
    int market[N_DECKS][MAX_SLOTS]      # -1: an empty slot
    int n_deck[N_DECKS]
    int deck_top[N_DECKS]
    int deck[N_DECKS][MAX_DECK]
    int n_stack
    int stack_top
    int stack[MAX_UNDER]
    int majority[MAX_MUSEUMS]   # at the end: the museum's majority seat, -1 none
    long long version
    int forced
    Player players[MAX_PLAYERS]


cdef struct Command:
    int kind
    int die
    int own             # the card (by its place in the seat's cards) whose action takes the die, -1: public
    int slot            # 0-based action of that card, or the public slot
    int market_deck
    int market_slot
    int row
    int col
    int target          # upgrade: the card's place in the seat's cards; museum: the museum
    int box
    long long sold[N_KINDS]
    int dive[7]         # dice of each value put on the dive


# ---- scoring: what games/artifacts/scoring.py computes ----------------------------------------

cdef inline Face* _face_of(Tables t, Owned* c):
    return &t.faces[c.card][c.level - 1]


cdef void _around(Tables t, Player* p, int row, int col, int* counts, int* bonus):
    """Neighbours of a place by category (counts[4]: all of them), and what their rep_adjacent
    abilities pay a newcomer of each category (bonus[4]: of any): bots._Place."""
    cdef int k, j
    cdef Owned* nb
    cdef Face* f
    for k in range(N_CATS):
        counts[k] = 0
        bonus[k] = 0
    for k in range(p.n_cards):
        nb = &p.cards[k]
        if (nb.row == row and c_abs(nb.col - col) == 1) or (nb.col == col and nb.row != row):
            counts[4] += 1
            counts[t.category[nb.card]] += 1
            f = _face_of(t, nb)
            for j in range(f.n_abilities):
                if f.ab_adjacent[j]:
                    bonus[f.ab_category[j]] += f.ab_per[j]


cdef void _finds(Tables t, Player* p, int extra, int* finds):
    """Underwater finds by kind (finds[3]: all), with `extra` (an underwater card, or -1) added."""
    cdef int k
    for k in range(N_FINDS):
        finds[k] = 0
    for k in range(p.n_under):
        finds[t.under_find[p.under[k]]] += 1
        finds[3] += 1
    if extra >= 0:
        finds[t.under_find[extra]] += 1
        finds[3] += 1


cdef inline long long _face_reputation(Face* f, int* counts, int* finds):
    cdef long long total = f.reputation
    cdef int j
    for j in range(f.n_abilities):
        if f.ab_adjacent[j]:
            total += f.ab_per[j] * counts[f.ab_category[j]]
        else:
            total += f.ab_per[j] * finds[f.ab_find[j]]
    return total


cdef long long _visible(Tables t, Game* g, int seat, int extra):
    """scoring.visible_reputation of a seat, with `extra` (an underwater card, or -1) found too,
    plus its museum majorities once awarded."""
    cdef Player* p = &g.players[seat]
    cdef int counts[N_CATS]
    cdef int bonus[N_CATS]
    cdef int finds[N_FINDS]
    cdef long long total = 0
    cdef int k
    _finds(t, p, extra, finds)
    for k in range(p.n_cards):
        _around(t, p, p.cards[k].row, p.cards[k].col, counts, bonus)
        total += _face_reputation(_face_of(t, &p.cards[k]), counts, finds)
    total += t.dive_reputation * (p.n_under + (extra >= 0))
    for k in range(t.n_museums):
        if g.majority[k] == seat:
            total += t.museum_majority[k]
    return total


cdef inline long long _yield(Act* a, int* counts, int* finds):
    """scoring.action_yield (counts: the acting card's neighbours)."""
    if a.effect == E_ARTIFACT_ADJ or a.effect == E_DOLLARS_ADJ:
        return a.amount + <long long>a.per * counts[a.category]
    if a.effect == E_DOLLARS_FINDS:
        return a.amount + <long long>a.per * finds[a.find]
    return a.amount


cdef int _museum_winner(Tables t, Game* g, int m, int* cubes):
    """scoring.museum_winner: the seat with most cubes, a tie to the later box; -1 for nobody."""
    cdef int last[MAX_PLAYERS]
    cdef int k, b, seat, top = 0, best = -1
    for k in range(g.n):
        cubes[k] = 0
        last[k] = -1
    for b in range(t.n_orders[g.side][m]):
        seat = g.boxes[m][b]
        if seat >= 0:
            cubes[seat] += 1
            last[seat] = b
    for k in range(g.n):
        if cubes[k] > top:
            top = cubes[k]
    if top == 0:
        return -1
    for k in range(g.n):
        if cubes[k] == top and (best < 0 or last[k] > last[best]):
            best = k
    return best


# ---- the greedy bot's values: games/artifacts/bots.py, the same arithmetic in the same order ------

cdef struct Decision:
    int seat
    double horizon
    double cost_weight
    int finds[N_FINDS]
    bint dive_known
    long long dive_gain


cdef inline double _yield_value(Act* a, int* counts, int* finds):
    cdef long long amount = _yield(a, counts, finds)
    if a.effect == E_ARTIFACT or a.effect == E_ARTIFACT_ADJ:
        return amount * ARTIFACT_DOLLARS[a.kind]
    return <double>amount


cdef double _engine(Face* f, int* counts, int* finds):
    """bots._Decision.engine: reputation-equivalent a face earns per remaining turn."""
    cdef double dollars = f.adventurers * DIE_DOLLARS
    cdef int k
    for k in range(f.n_actions):
        if f.actions[k].effect == E_BUY:
            dollars += 1.0
        else:
            dollars += ENGINE_SHARE * _yield_value(&f.actions[k], counts, finds)
    return dollars * DOLLAR * 0.5


cdef void _decision(Tables t, Game* g, int seat, Decision* d):
    cdef Player* p = &g.players[seat]
    cdef long long leader = g.players[0].reputation
    cdef int k
    cdef double scarcity, share, weight
    for k in range(1, g.n):
        if g.players[k].reputation > leader:
            leader = g.players[k].reputation
    d.seat = seat
    if g.triggered:
        d.horizon = 0.0
    else:
        d.horizon = (t.end_reputation - leader) / 2.0
        if not d.horizon > 0.0:
            d.horizon = 0.0
    scarcity = 12.0 / (p.dollars if p.dollars > 1 else 1)
    if not scarcity < 1.0:
        scarcity = 1.0
    share = d.horizon / 3.0
    if not share < 1.0:
        share = 1.0
    weight = scarcity * share
    if not weight > 0.05:
        weight = 0.05
    d.cost_weight = DOLLAR * weight
    _finds(t, p, -1, d.finds)
    d.dive_known = False


cdef double _use_value(Tables t, Game* g, Decision* d, int own, int slot):
    cdef Player* p = &g.players[d.seat]
    cdef int counts[N_CATS]
    cdef int bonus[N_CATS]
    cdef Act* a
    if own < 0:
        a = &t.public[slot]
        # A public card has no place in the seat's rows; no adjacency action is printed on one.
        for k in range(N_CATS):
            counts[k] = 0
        return _yield_value(a, counts, d.finds) * DOLLAR
    _around(t, p, p.cards[own].row, p.cards[own].col, counts, bonus)
    a = &_face_of(t, &p.cards[own]).actions[slot]
    return _yield_value(a, counts, d.finds) * DOLLAR


cdef double _buy_value(Tables t, Game* g, Decision* d, int card, int row, int col):
    cdef Player* p = &g.players[d.seat]
    cdef int counts[N_CATS]
    cdef int bonus[N_CATS]
    cdef Face* f = &t.faces[card][0]
    cdef long long gain
    cdef double engine, cost
    _around(t, p, row, col, counts, bonus)
    gain = _face_reputation(f, counts, d.finds) + bonus[4] + bonus[t.category[card]]
    engine = _engine(f, counts, d.finds) * d.horizon
    cost = t.cost[card] + t.scrolls[card] * ARTIFACT_DOLLARS[SCROLL]
    return gain + engine - cost * d.cost_weight


cdef double _upgrade_value(Tables t, Game* g, Decision* d, int target):
    cdef Player* p = &g.players[d.seat]
    cdef int counts[N_CATS]
    cdef int bonus[N_CATS]
    cdef Owned* c = &p.cards[target]
    cdef long long gain = 0
    cdef double engine, cost
    _around(t, p, c.row, c.col, counts, bonus)
    if c.level != 2:
        gain = _face_reputation(&t.faces[c.card][1], counts, d.finds) - _face_reputation(&t.faces[c.card][0], counts, d.finds)
    engine = (_engine(&t.faces[c.card][1], counts, d.finds) - _engine(&t.faces[c.card][0], counts, d.finds)) * d.horizon
    cost = t.cost[c.card] + t.scrolls[c.card] * ARTIFACT_DOLLARS[SCROLL]
    return gain + engine - cost * d.cost_weight


cdef double _museum_value(Tables t, Game* g, Decision* d, int m, int box):
    cdef int cubes[MAX_PLAYERS]
    cdef int count = t.orders[g.side][m][box]
    cdef int before, after
    cdef double dollars, swing
    dollars = (count + t.museum_bonus[m]) - count * ARTIFACT_DOLLARS[t.museum_kind[m]]
    before = _museum_winner(t, g, m, cubes)
    g.boxes[m][box] = d.seat
    after = _museum_winner(t, g, m, cubes)
    g.boxes[m][box] = -1
    swing = t.museum_majority[m] * MAJORITY_ODDS * ((after == d.seat) - (before == d.seat))
    return dollars * DOLLAR + swing


cdef inline double _sale_value(long long* sold):
    cdef int kinds = (sold[0] > 0) + (sold[1] > 0) + (sold[2] > 0) + (sold[3] > 0)
    cdef long long dollars = sold[0] + sold[1] + sold[2] + sold[3] + (kinds - 1 if kinds > 1 else 0)
    cdef double kept = sold[0] * ARTIFACT_DOLLARS[0] + sold[1] * ARTIFACT_DOLLARS[1]
    kept = kept + sold[2] * ARTIFACT_DOLLARS[2]
    kept = kept + sold[3] * ARTIFACT_DOLLARS[3]
    return (dollars - kept) * DOLLAR


cdef long long _dive_gain(Tables t, Game* g, Decision* d):
    if not d.dive_known:
        d.dive_gain = _visible(t, g, d.seat, g.stack[g.stack_top]) - _visible(t, g, d.seat, -1)
        d.dive_known = True
    return d.dive_gain


# ---- the legal commands in the rules' order (games/artifacts/legal.py), valued as they come -----

cdef struct Best:
    double value
    int listed          # commands listed so far, EndTurn included
    Command cmd


cdef inline void _offer(Best* b, double v, Command* c):
    b.listed += 1
    if v > b.value:
        b.value = v
        b.cmd = c[0]


cdef int _places(Player* p, int* rows, int* cols):
    """decide.free_places: empty places sharing a side with an owned card, sorted."""
    cdef int n = 0, k, j, r, col, q, taken, i
    cdef int cand_r[3]
    cdef int cand_c[3]
    for k in range(p.n_cards):
        cand_r[0] = p.cards[k].row
        cand_c[0] = p.cards[k].col - 1
        cand_r[1] = p.cards[k].row
        cand_c[1] = p.cards[k].col + 1
        cand_r[2] = 3 - p.cards[k].row
        cand_c[2] = p.cards[k].col
        for j in range(3):
            r = cand_r[j]
            col = cand_c[j]
            taken = 0
            for q in range(p.n_cards):
                if p.cards[q].row == r and p.cards[q].col == col:
                    taken = 1
                    break
            for q in range(n):
                if rows[q] == r and cols[q] == col:
                    taken = 1
                    break
            if taken:
                continue
            # Insertion in (row, col) order.
            i = n
            while i > 0 and (rows[i - 1] > r or (rows[i - 1] == r and cols[i - 1] > col)):
                rows[i] = rows[i - 1]
                cols[i] = cols[i - 1]
                i -= 1
            rows[i] = r
            cols[i] = col
            n += 1
    return n


cdef inline bint _listed(long long f, long long held):
    return f == 0 or f == 1 or f == held


cdef inline void _sale(Command* c, Best* b, int die, long long f0, long long f1, long long f2, long long f3):
    c.sold[0] = f0
    c.sold[1] = f1
    c.sold[2] = f2
    c.sold[3] = f3
    _offer(b, _sale_value(c.sold) - PIP * die, c)


cdef void _sales(Game* g, Decision* d, int die, Command* c, Best* b):
    """Private Collectors' mixes as legal._sales lists them, in its (sorted) order: every mix of the
    held artifacts, or past EXACT_SALES mixes each kind alone in any amount and every mix selling 0,
    1 or all of each kind. Walked in lexicographic order, skipping what the subset leaves out, so
    that it costs about the sum of the holdings, not their product."""
    cdef long long* held = g.players[d.seat].artifacts
    cdef long long combos = 1, f0, f1, f2, f3
    cdef int k
    cdef bint exact
    for k in range(N_KINDS):
        combos *= held[k] + 1
        if combos > EXACT + 1:
            break
    exact = combos - 1 <= EXACT
    c.kind = C_COLLECTORS
    for f0 in range(held[0] + 1):
        if not exact and not _listed(f0, held[0]):
            _sale(c, b, die, f0, 0, 0, 0)
            continue
        for f1 in range(held[1] + 1):
            if not exact and not _listed(f1, held[1]):
                if f0 == 0:
                    _sale(c, b, die, 0, f1, 0, 0)
                continue
            for f2 in range(held[2] + 1):
                if not exact and not _listed(f2, held[2]):
                    if f0 == 0 and f1 == 0:
                        _sale(c, b, die, 0, 0, f2, 0)
                    continue
                for f3 in range(held[3] + 1):
                    if not exact and not _listed(f3, held[3]):
                        if f0 == 0 and f1 == 0 and f2 == 0:
                            _sale(c, b, die, 0, 0, 0, f3)
                        continue
                    if f0 + f1 + f2 + f3 > 0:
                        _sale(c, b, die, f0, f1, f2, f3)


cdef void _buys(Tables t, Game* g, Decision* d, int die, Command* c, Best* b,
                int n_markets, int* m_deck, int* m_slot, int n_places, int* rows, int* cols,
                double* buy_values, bint* buy_known, int* upgrades, int n_upgrades, double* up_values):
    cdef int i, j, card
    for i in range(n_markets):
        card = g.market[m_deck[i]][m_slot[i]]
        for j in range(n_places):
            if not buy_known[i * MAX_PLACES + j]:
                buy_values[i * MAX_PLACES + j] = _buy_value(t, g, d, card, rows[j], cols[j])
                buy_known[i * MAX_PLACES + j] = True
            c.kind = C_BUY
            c.market_deck = m_deck[i]
            c.market_slot = m_slot[i]
            c.row = rows[j]
            c.col = cols[j]
            _offer(b, buy_values[i * MAX_PLACES + j] - PIP * die, c)
    for i in range(n_upgrades):
        c.kind = C_UPGRADE
        c.target = upgrades[i]
        _offer(b, up_values[i] - PIP * die, c)


cdef void _slot_commands(Tables t, Game* g, Decision* d, Act* a, int own, int slot, int museum,
                         Best* b, int* values, int n_values,
                         int n_markets, int* m_deck, int* m_slot, int n_places, int* rows, int* cols,
                         double* buy_values, bint* buy_known, int* upgrades, int n_upgrades, double* up_values):
    """Every command of one free action slot, each die value in ascending order."""
    cdef Player* p = &g.players[d.seat]
    cdef Command c
    cdef int i, die, bx
    cdef long long held
    cdef double use = 0.0
    cdef bint use_known = False
    c.own = own
    c.slot = slot
    for i in range(n_values):
        die = values[i]
        if not (a.need >> die) & 1:
            continue
        c.die = die
        if a.effect <= E_DOLLARS_FINDS:
            if not use_known:
                use = _use_value(t, g, d, own, slot)
                use_known = True
            c.kind = C_USE
            _offer(b, use - PIP * die, &c)
        elif a.effect == E_BUY:
            _buys(t, g, d, die, &c, b, n_markets, m_deck, m_slot, n_places, rows, cols,
                  buy_values, buy_known, upgrades, n_upgrades, up_values)
        elif a.effect == E_MUSEUM:
            held = p.artifacts[t.museum_kind[museum]]
            for bx in range(t.n_orders[g.side][museum]):
                if g.boxes[museum][bx] < 0 and t.orders[g.side][museum][bx] <= held:
                    c.kind = C_MUSEUM
                    c.target = museum
                    c.box = bx
                    _offer(b, _museum_value(t, g, d, museum, bx) - PIP * die, &c)
        elif a.effect == E_COLLECTORS:
            _sales(g, d, die, &c, b)


cdef void _dives(Tables t, Game* g, Decision* d, Best* b):
    """legal._dive_commands: every take of the unplaced dice (lower values varying slowest)
    summing to the top card's number, valued as bots._Decision.value values a Dive."""
    cdef int vals[6]
    cdef int have[6]
    cdef int take[6]
    cdef int n = 0, v, k, count, total, need
    cdef Command c
    if g.dived or g.stack_top >= g.n_stack:
        return
    need = t.under_number[g.stack[g.stack_top]]
    for v in range(1, 7):
        if g.dice[v] > 0:
            vals[n] = v
            have[n] = g.dice[v]
            take[n] = 0
            n += 1
    c.kind = C_DIVE
    while True:
        count = 0
        total = 0
        for k in range(n):
            count += take[k]
            total += take[k] * vals[k]
        if count > 0 and total >= need:
            for v in range(7):
                c.dive[v] = 0
            for k in range(n):
                c.dive[vals[k]] = take[k]
            _offer(b, _dive_gain(t, g, d) - DIVE_DIE * count - PIP * total, &c)
        # The next take in itertools.product order: the last value varies fastest.
        k = n - 1
        while k >= 0 and take[k] == have[k]:
            take[k] = 0
            k -= 1
        if k < 0:
            break
        take[k] += 1


cdef void _choose(Tables t, Game* g, Best* b):
    """The greedy bot's choice among the legal commands (bots.GreedyBot.choose): the first of the
    highest value above 0, else EndTurn (listed first)."""
    cdef Player* p = &g.players[g.current]
    cdef Decision d
    cdef int values[6]
    cdef int n_values = 0, v, k, j, card, n_markets = 0, n_places, n_upgrades = 0
    cdef int m_deck[MAX_MARKET]
    cdef int m_slot[MAX_MARKET]
    cdef int rows[MAX_PLACES]
    cdef int cols[MAX_PLACES]
    cdef int upgrades[MAX_OWNED]
    cdef double up_values[MAX_OWNED]
    cdef double buy_values[MAX_MARKET * MAX_PLACES]
    cdef bint buy_known[MAX_MARKET * MAX_PLACES]
    cdef Face* f
    b.value = 0.0
    b.listed = 1
    b.cmd.kind = C_END
    _decision(t, g, g.current, &d)
    for v in range(1, 7):
        if g.dice[v] > 0:
            values[n_values] = v
            n_values += 1
    # What every buy slot offers this move: the market cards the seat can pay, the free places,
    # the cards it can turn over (legal._affordable, decide.free_places, legal._buys).
    for k in range(N_DECKS):
        for j in range(g.n_market[k]):
            card = g.market[k][j]
            if card >= 0 and t.cost[card] <= p.dollars and t.scrolls[card] <= p.artifacts[SCROLL]:
                m_deck[n_markets] = k
                m_slot[n_markets] = j
                n_markets += 1
    n_places = _places(p, rows, cols)
    for k in range(n_markets * MAX_PLACES):
        buy_known[k] = False
    for k in range(p.n_cards):
        card = p.cards[k].card
        if p.cards[k].level == 1 and t.cost[card] <= p.dollars and t.scrolls[card] <= p.artifacts[SCROLL]:
            upgrades[n_upgrades] = k
            up_values[n_upgrades] = _upgrade_value(t, g, &d, k)
            n_upgrades += 1
    for k in range(p.n_cards):
        f = _face_of(t, &p.cards[k])
        for j in range(f.n_actions):
            if not (g.used_own[p.cards[k].card] >> j) & 1:
                _slot_commands(t, g, &d, &f.actions[j], k, j, -1, b, values, n_values,
                               n_markets, m_deck, m_slot, n_places, rows, cols,
                               buy_values, buy_known, upgrades, n_upgrades, up_values)
    for k in range(t.n_public):
        if not g.used_public[k]:
            _slot_commands(t, g, &d, &t.public[k], -1, k, t.public_museum[k], b, values, n_values,
                           n_markets, m_deck, m_slot, n_places, rows, cols,
                           buy_values, buy_known, upgrades, n_upgrades, up_values)
    _dives(t, g, &d, b)


# ---- the rules: decide.py and flow.py, outcomes applied directly, events counted ------------------

cdef int _adventurers(Tables t, Player* p):
    cdef int total = 0, k
    for k in range(p.n_cards):
        total += _face_of(t, &p.cards[k]).adventurers
    return total if total < t.dice_in_box else t.dice_in_box


cdef int _start_turn(Tables t, Game* g, int seat, object seed, long long version) except -1:
    """flow.start_turn: the roll, drawn as the rules draw it for the command judged at `version`."""
    cdef int k, n
    if seat == g.order[0]:
        g.round += 1
    g.current = seat
    for k in range(7):
        g.dice[k] = 0
    n = _adventurers(t, &g.players[seat])
    rng = Rng.for_version(seed, version)
    for k in range(n):
        g.dice[<int>rng.die()] += 1
    g.n_dice = n
    g.dived = False
    g.version += 1                              # TurnStarted
    return 0


cdef void _finish(Tables t, Game* g):
    cdef int cubes[MAX_PLAYERS]
    cdef int m, k
    cdef long long now
    for m in range(t.n_museums):
        g.majority[m] = _museum_winner(t, g, m, cubes)
        g.version += 1                          # MuseumMajority
    for k in range(g.n):
        now = _visible(t, g, k, -1)
        if now != g.players[k].reputation:
            g.players[k].reputation = now
            g.version += 1                      # ReputationMarked
    g.version += 1                              # GameFinished
    g.over = True


cdef int _end_turn(Tables t, Game* g, object seed, long long judged) except -1:
    """flow.end_turn: the dice leave the cards; the next seat's turn, or the end of the game."""
    cdef int seat = g.current, k, at = 0
    cdef bint ends = (g.triggered or g.round >= t.max_rounds) and seat == g.order[g.n - 1]
    for k in range(g.n):
        if g.order[k] == seat:
            at = k
    for k in range(7):
        g.dice[k] = 0
    g.n_dice = 0
    for k in range(t.n_assets):
        g.used_own[k] = 0
    for k in range(t.n_public):
        g.used_public[k] = False
    g.dived = False
    g.version += 1                              # TurnEnded
    if ends:
        _finish(t, g)
    else:
        _start_turn(t, g, g.order[(at + 1) % g.n], seed, judged)
    return 0


cdef int _after_action(Tables t, Game* g, object seed, long long judged) except -1:
    """flow.after_action: the track follows, the end may trigger, a turn with no dice left ends."""
    cdef int seat = g.current
    cdef long long now = _visible(t, g, seat, -1)
    if now != g.players[seat].reputation:
        g.players[seat].reputation = now
        g.version += 1                          # ReputationMarked
    if not g.triggered and now >= t.end_reputation:
        g.triggered = True
        g.version += 1                          # EndTriggered
    if g.n_dice == 0:
        _end_turn(t, g, seed, judged)
    return 0


cdef int _apply(Tables t, Game* g, Command* c, object seed) except -1:
    cdef long long judged = g.version
    cdef Player* p = &g.players[g.current]
    cdef Act* a
    cdef int counts[N_CATS]
    cdef int bonus[N_CATS]
    cdef int finds[N_FINDS]
    cdef int k, card, d, kinds, m
    cdef long long amount
    if c.kind == C_END:
        return _end_turn(t, g, seed, judged)
    if c.kind == C_DIVE:
        for k in range(7):
            g.dice[k] -= c.dive[k]
            g.n_dice -= c.dive[k]
        p.under[p.n_under] = g.stack[g.stack_top]
        p.n_under += 1
        g.stack_top += 1
        g.dived = True
        g.version += 2                          # DicePlaced, UnderwaterFound
        return _after_action(t, g, seed, judged)
    g.dice[c.die] -= 1
    g.n_dice -= 1
    if c.own >= 0:
        g.used_own[p.cards[c.own].card] |= 1 << c.slot
        a = &_face_of(t, &p.cards[c.own]).actions[c.slot]
    else:
        g.used_public[c.slot] = True
        a = &t.public[c.slot]
    g.version += 2                              # DicePlaced and the outcome
    if c.kind == C_USE:
        if c.own >= 0:
            _around(t, p, p.cards[c.own].row, p.cards[c.own].col, counts, bonus)
        else:
            for k in range(N_CATS):
                counts[k] = 0
        _finds(t, p, -1, finds)
        amount = _yield(a, counts, finds)
        if a.effect == E_ARTIFACT or a.effect == E_ARTIFACT_ADJ:
            p.artifacts[a.kind] += amount
        else:
            p.dollars += amount
    elif c.kind == C_BUY:
        card = g.market[c.market_deck][c.market_slot]
        p.dollars -= t.cost[card]
        p.artifacts[SCROLL] -= t.scrolls[card]
        p.cards[p.n_cards].card = card
        p.cards[p.n_cards].level = 1
        p.cards[p.n_cards].row = c.row
        p.cards[p.n_cards].col = c.col
        p.n_cards += 1
        d = c.market_deck
        g.market[d][c.market_slot] = -1
        if g.deck_top[d] < g.n_deck[d]:
            g.market[d][c.market_slot] = g.deck[d][g.deck_top[d]]
            g.deck_top[d] += 1
            g.version += 1                      # MarketRefilled
    elif c.kind == C_UPGRADE:
        card = p.cards[c.target].card
        p.dollars -= t.cost[card]
        p.artifacts[SCROLL] -= t.scrolls[card]
        p.cards[c.target].level = 2
    elif c.kind == C_MUSEUM:
        m = c.target
        p.artifacts[t.museum_kind[m]] -= t.orders[g.side][m][c.box]
        p.dollars += t.orders[g.side][m][c.box] + t.museum_bonus[m]
        g.boxes[m][c.box] = g.current
    else:  # C_COLLECTORS
        amount = 0
        kinds = 0
        for k in range(N_KINDS):
            p.artifacts[k] -= c.sold[k]
            amount += c.sold[k]
            kinds += c.sold[k] > 0
        p.dollars += t.collectors_amount * amount + t.collectors_per * (kinds - 1 if kinds > 1 else 0)
    return _after_action(t, g, seed, judged)


cdef bint _load(Tables t, object match, Game* g) except -1:
    """The offline game's aggregate (its state, seed and version) as C arrays; False for what the
    playout does not take."""
    cdef int k, j, d, m
    cdef Player* p
    state = match.game
    if state.phase != PLAY or state.over or state.current is None or match.seed is None:
        return False
    n = state.num_players
    if not 2 <= n <= MAX_PLAYERS or len(state.players) != n or sorted(state.order) != list(range(n)):
        return False
    if not 0 <= state.current < n or state.museum_side not in ("2p", "3p"):
        return False
    if len(state.dice) > MAX_DICE or any(not 1 <= v <= 6 for v in state.dice):
        return False
    if not 0 <= state.round <= VALUE_BOUND or any(
        abs(v) > STATE_BOUND for pl in state.players for v in (pl.dollars, pl.reputation, *pl.artifacts)
    ):
        return False
    g.n = n
    for k, seat in enumerate(state.order):
        g.order[k] = seat
    g.current = state.current
    g.round = state.round
    g.triggered = state.triggered
    g.over = False
    g.dived = state.dived
    g.side = 0 if state.museum_side == "2p" else 1
    g.version = match.version
    g.forced = 0
    for k in range(7):
        g.dice[k] = 0
    for v in state.dice:
        g.dice[v] += 1
    g.n_dice = len(state.dice)
    for k in range(t.n_assets):
        g.used_own[k] = 0
    for k in range(t.n_public):
        g.used_public[k] = False
    assets = t.asset_index
    for key in state.used:
        card, _, action = key.rpartition("#")
        if key in t.public_slot:
            g.used_public[<int>t.public_slot[key]] = True
        elif card in assets and action.isdigit() and 1 <= int(action) <= MAX_ACTIONS:
            g.used_own[<int>assets[card]] |= 1 << (int(action) - 1)
        else:
            return False
    # Museums by the data's order, whatever order the state lists them in.
    if sorted(state.museum_ids) != sorted(t.museum_index) or len(state.boxes) != len(state.museum_ids):
        return False
    for mid, boxes in zip(state.museum_ids, state.boxes):
        m = t.museum_index[mid]
        if len(boxes) != t.n_orders[g.side][m] or any(s is not None and not 0 <= s < n for s in boxes):
            return False
        for j, seat in enumerate(boxes):
            g.boxes[m][j] = -1 if seat is None else seat
        g.majority[m] = -1
    if state.majorities:
        return False
    if len(state.market) != N_DECKS or len(state.decks) != N_DECKS:
        return False
    for d in range(N_DECKS):
        if len(state.market[d]) > MAX_SLOTS or len(state.decks[d]) > MAX_DECK:
            return False
        g.n_market[d] = len(state.market[d])
        for j, card in enumerate(state.market[d]):
            if card is not None and card not in assets:
                return False
            g.market[d][j] = -1 if card is None else assets[card]
        g.n_deck[d] = len(state.decks[d])
        g.deck_top[d] = 0
        for j, card in enumerate(state.decks[d]):
            if card == HIDDEN_CARD or card not in assets:
                return False
            g.deck[d][j] = assets[card]
    unders = t.under_index
    if len(state.underwater) > MAX_UNDER or any(u not in unders for u in state.underwater):
        return False
    g.n_stack = len(state.underwater)
    g.stack_top = 0
    for j, u in enumerate(state.underwater):
        g.stack[j] = unders[u]
    for k, pl in enumerate(state.players):
        p = &g.players[k]
        # Room for every card still to come: the market's and the decks'.
        if len(pl.cards) + sum(len(x) for x in state.decks) + sum(len(x) for x in state.market) > MAX_OWNED:
            return False
        if len(pl.underwater) + len(state.underwater) > MAX_UNDER or len(pl.artifacts) != N_KINDS:
            return False
        if any(pc.card not in assets or pc.level not in (1, 2) or pc.row not in (1, 2) for pc in pl.cards):
            return False
        if any(u not in unders for u in pl.underwater):
            return False
        p.n_cards = len(pl.cards)
        for j, pc in enumerate(pl.cards):
            p.cards[j].card = assets[pc.card]
            p.cards[j].level = pc.level
            p.cards[j].row = pc.row
            p.cards[j].col = pc.col
        p.dollars = pl.dollars
        for j in range(N_KINDS):
            p.artifacts[j] = pl.artifacts[j]
        p.n_under = len(pl.underwater)
        for j, u in enumerate(pl.underwater):
            p.under[j] = unders[u]
        p.reputation = pl.reputation
    return True


def decision(Tables tables, match):
    """The greedy bot's choice at the loaded position, as the playout makes it: (how many commands
    the rules list there, the command chosen), or None for a position it does not take. For tests:
    both must be what legal_actions and GreedyBot.choose give."""
    cdef Game g
    cdef Best b
    cdef Command* c = &b.cmd
    cdef Player* p
    if not _load(tables, match, &g):
        return None
    _choose(tables, &g, &b)
    p = &g.players[g.current]
    if c.kind == C_END:
        return b.listed, wire.EndTurn()
    if c.kind == C_DIVE:
        return b.listed, wire.Dive(dice=[v for v in range(1, 7) for _ in range(c.dive[v])])
    if c.kind == C_COLLECTORS:
        return b.listed, wire.SellToCollectors(die=c.die, fossil=c.sold[0], scroll=c.sold[1], gem=c.sold[2],
                                               statue=c.sold[3])
    if c.kind == C_MUSEUM:
        return b.listed, wire.SellToMuseum(die=c.die, museum=tables.museum_ids[c.target], box=c.box + 1)
    if c.own >= 0:
        card, action = tables.asset_ids[p.cards[c.own].card], c.slot + 1
    else:
        card, action = tables.public_ids[c.slot]
    if c.kind == C_USE:
        return b.listed, wire.UseAction(die=c.die, card=card, action=action)
    if c.kind == C_BUY:
        market = tables.asset_ids[g.market[c.market_deck][c.market_slot]]
        return b.listed, wire.Buy(die=c.die, card=card, action=action, market=market, row=c.row, col=c.col)
    return b.listed, wire.Upgrade(die=c.die, card=card, action=action, target=tables.asset_ids[p.cards[c.target].card])


def playout(Tables tables, match):
    """Play the offline game's aggregate `match` (its state in the play phase, its seed and version)
    to the end with the greedy bot in every seat. Returns (winners, forced moves, reputation,
    dollars), or None for a position it does not take (set-up, over, a hidden deck). Nothing is
    changed."""
    cdef Game g
    cdef Best b
    cdef int k, best
    if not _load(tables, match, &g):
        return None
    seed = match.seed
    while not g.over:
        _choose(tables, &g, &b)
        if b.listed == 1:
            g.forced += 1
        _apply(tables, &g, &b.cmd, seed)
    best = 0
    for k in range(1, g.n):
        if (g.players[k].reputation, g.players[k].dollars) > (g.players[best].reputation, g.players[best].dollars):
            best = k
    winners = [k for k in range(g.n)
               if g.players[k].reputation == g.players[best].reputation and g.players[k].dollars == g.players[best].dollars]
    return winners, g.forced, [g.players[k].reputation for k in range(g.n)], [g.players[k].dollars for k in range(g.n)]
