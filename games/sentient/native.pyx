# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Sentient's native core: the same game as games/sentient/rules.py, stepped in C for offline play.

Why a second implementation: a self-play step of the Python rules builds and folds four or five
event structs and costs about 32 us, a third of OpenSpiel's C++ backgammon (bench/README.md). This
core keeps the state in C arrays and applies a move's outcome directly, with no events, so that
random and search play, the RL adapters and the bench run several times faster.

It is never the referee's: the referee and every recorded game use the Python rules. An offline
game (games/offline.py) runs on this core only when it keeps no log, and hands over to the Python
aggregate (`state()` builds it) whenever it is asked for something the core does not model.

It must stay the same game: every draw comes from the same SHA-256 stream at the same log version
(games/rng.py), every state it reaches is compared field by field with the Python rules' state at
every step of seeded random games, resignations, refusals and determinizations included
(tests/games/sentient/test_native.py). A change to the rules that this file does not follow fails
there.
"""

from hashlib import sha256

from contracts import lifecycle as lc
from contracts import sentient as c
from games.sentient.state import PlayerState, SentientState

cdef enum:
    MAX_PLAYERS = 4
    SLOTS = 4          # factory slots, and network slots per player
    DICE = 5
    POSITIONS = 5      # investor positions
    MAX_CARDS = 64
    MAX_INVESTORS = 16
    ROUNDS = 3
    MAX_ASSISTANTS = 5
    AGENTS_PER_ROUND = 4
    # Card values the core takes: 60 cards' worth of them stays far inside a C int.
    VALUE_BOUND = 1 << 20

# Scoring kinds (games/sentient/scoring.py), in the order of this table.
KINDS = (
    "match",
    "left_greater", "left_less", "equal", "differ_by_one",
    "both_odd", "both_even", "odd_and_even", "left_odd_right_even", "left_even_right_odd",
    "sum_at_least", "sum_at_most", "difference_at_least", "difference_at_most",
    "sum_minus", "left_die", "right_die", "lower_die", "higher_die", "difference",
)
CARD_TYPES = ("information", "transport", "industry", "military", "service")
_MODIFIER = {"+": 1, "-": -1, "=": 0}


class NotNative(ValueError):
    """The data cannot be held by this core (more components than it has room for)."""


cdef class Tables:
    """The component data as C arrays, plus what turns indexes back into the data's ids."""

    cdef int n_cards
    cdef int kind[MAX_CARDS]
    cdef int ctype[MAX_CARDS]
    cdef int left[MAX_CARDS]
    cdef int right[MAX_CARDS]
    cdef int vp[MAX_CARDS]
    cdef int number[MAX_CARDS]
    cdef int points_one[MAX_CARDS]
    cdef int points_both[MAX_CARDS]
    cdef int threshold[MAX_CARDS]
    cdef int offset[MAX_CARDS]
    # Position of each card in the order of its id (a determinization sorts the deck by id).
    cdef int id_rank[MAX_CARDS]
    cdef int n_investors
    cdef int investor_type[MAX_INVESTORS]
    cdef int round_size[ROUNDS]
    cdef int round_investors[ROUNDS][MAX_INVESTORS]
    cdef int n_sides
    cdef int side_type[MAX_INVESTORS]
    cdef tuple card_ids
    cdef tuple investor_ids
    cdef tuple side_ids
    # Every Acquire a legal list can hold, built once: [slot][network slot][left][right][assistants].
    cdef list acquires
    cdef object pass_

    def __init__(self, data):
        cards = [data.cards[cid] for cid in data.card_ids]
        investors = list(data.investors.values())
        if len(cards) > MAX_CARDS or len(investors) > MAX_INVESTORS or len(data.side_ids) > MAX_INVESTORS:
            raise NotNative("more components than the native core holds")
        self.card_ids = tuple(data.card_ids)
        self.n_cards = len(cards)
        # The data file bounds no value from above; the core adds scores in C ints.
        for card in cards:
            values = (card.vp, card.number, card.points_one, card.points_both, card.threshold, card.offset)
            if any(type(v) is not int or not -VALUE_BOUND <= v <= VALUE_BOUND for v in values):
                raise NotNative(f"card {card.id} holds a value that is not an int within +-{VALUE_BOUND}")
        for i, card in enumerate(cards):
            self.kind[i] = KINDS.index(card.kind)
            self.ctype[i] = CARD_TYPES.index(card.type)
            self.left[i] = _MODIFIER[card.left]
            self.right[i] = _MODIFIER[card.right]
            self.vp[i] = card.vp
            self.number[i] = card.number
            self.points_one[i] = card.points_one
            self.points_both[i] = card.points_both
            self.threshold[i] = card.threshold
            self.offset[i] = card.offset
        for rank, i in enumerate(sorted(range(self.n_cards), key=lambda k: self.card_ids[k])):
            self.id_rank[i] = rank
        self.investor_ids = tuple(inv.id for inv in investors)
        self.n_investors = len(investors)
        for i, inv in enumerate(investors):
            self.investor_type[i] = CARD_TYPES.index(inv.type)
        for r in range(ROUNDS):
            ids = data.investors_by_round[r]
            if len(ids) != POSITIONS:
                raise NotNative(f"round {r + 1} lays out {len(ids)} investors, not one per position")
            self.round_size[r] = len(ids)
            for k, inv_id in enumerate(ids):
                self.round_investors[r][k] = self.investor_ids.index(inv_id)
        self.side_ids = tuple(data.side_ids)
        self.n_sides = len(self.side_ids)
        for i, sid in enumerate(self.side_ids):
            self.side_type[i] = CARD_TYPES.index(data.board_sides[sid].starting_investor)
        self.acquires = [
            c.Acquire(factory_slot=fs, network_slot=ns, assistants=a, block_left=bool(bl), block_right=bool(br))
            for fs in range(1, SLOTS + 1)
            for ns in range(1, SLOTS + 1)
            for bl in range(2)
            for br in range(2)
            for a in range(MAX_ASSISTANTS + 1)
        ]
        self.pass_ = c.Pass()

    cdef int score(self, int card, int a, int b):
        """games.sentient.scoring.score_card."""
        cdef int k = self.kind[card]
        cdef int hit
        if k == 0:
            if a == self.number[card] and b == self.number[card]:
                return self.points_both[card]
            if a == self.number[card] or b == self.number[card]:
                return self.points_one[card]
            return 0
        if k >= 14:
            return _floor0(_measure(k, a, b) - self.offset[card])
        if k == 1:
            hit = a > b
        elif k == 2:
            hit = a < b
        elif k == 3:
            hit = a == b
        elif k == 4:
            hit = abs(a - b) == 1
        elif k == 5:
            hit = a % 2 == 1 and b % 2 == 1
        elif k == 6:
            hit = a % 2 == 0 and b % 2 == 0
        elif k == 7:
            hit = a % 2 != b % 2
        elif k == 8:
            hit = a % 2 == 1 and b % 2 == 0
        elif k == 9:
            hit = a % 2 == 0 and b % 2 == 1
        elif k == 10:
            hit = a + b >= self.threshold[card]
        elif k == 11:
            hit = a + b <= self.threshold[card]
        elif k == 12:
            hit = abs(a - b) >= self.threshold[card]
        else:
            hit = abs(a - b) <= self.threshold[card]
        return self.vp[card] if hit else 0


cdef inline int _floor0(int v):
    return v if v > 0 else 0


cdef inline int _measure(int k, int a, int b):
    if k == 14:
        return a + b
    if k == 15:
        return a
    if k == 16:
        return b
    if k == 17:
        return a if a < b else b
    if k == 18:
        return a if a > b else b
    return abs(a - b)


cdef inline int _calibrate(int value, int modifier):
    if modifier == 1:
        return 1 if value == 6 else value + 1
    if modifier == -1:
        return 6 if value == 1 else value - 1
    return value


cdef class Stream:
    """games.rng.Rng: SHA-256(key || counter), one whole big-endian 32-bit word per draw."""

    cdef bytes key
    cdef str source
    cdef unsigned long long counter
    cdef unsigned int words[8]
    cdef int unread

    def __init__(self, str source):
        self.source = source
        self.key = None
        self.counter = 0
        self.unread = 0

    cdef int refill(self) except -1:
        if self.key is None:
            self.key = sha256(self.source.encode()).digest()
        cdef bytes block = sha256(self.key + int(self.counter).to_bytes(8, "big")).digest()
        cdef const unsigned char* b = block
        cdef int i
        for i in range(8):
            # Stored last first, so that `unread - 1` is the next word.
            self.words[7 - i] = (<unsigned int>b[4 * i] << 24) | (<unsigned int>b[4 * i + 1] << 16) | (
                <unsigned int>b[4 * i + 2] << 8) | <unsigned int>b[4 * i + 3]
        self.counter += 1
        self.unread = 8
        return 0

    cdef int below(self, int n) except -1:
        cdef unsigned long long span = 1ULL << 32
        cdef unsigned long long limit = span - span % <unsigned long long>n
        cdef unsigned int x
        while True:
            if self.unread == 0:
                self.refill()
            self.unread -= 1
            x = self.words[self.unread]
            if x < limit:
                return <int>(x % <unsigned int>n)

    cdef int shuffle(self, int* items, int n) except -1:
        """Fisher-Yates from the last position down, as Rng.shuffle."""
        cdef int i, j, t
        for i in range(n - 1, 0, -1):
            j = self.below(i + 1)
            t = items[i]
            items[i] = items[j]
            items[j] = t
        return 0


cdef Stream _for_version(str seed, long version):
    return Stream(f"{seed}:{version}")


cdef struct Player:
    int side
    int start_type
    int dice[DICE]
    int network[SLOTS]
    int agents
    int assistants
    bint passed
    int vp
    int n_investors
    int investors[MAX_INVESTORS]
    int n_collected
    int collected[MAX_CARDS]


cdef class Core:
    """One Sentient game past set-up, with the lifecycle around it that offline play needs: the
    log version (the RNG is keyed by it), resigned seats played by their default action, the end."""

    cdef Tables t
    cdef int n
    cdef int round
    cdef bint over
    cdef int current
    cdef Player players[MAX_PLAYERS]
    cdef int deck[MAX_CARDS]
    cdef int deck_head
    cdef int deck_end
    cdef int discard[MAX_CARDS]
    cdef int n_discard
    cdef int factory[SLOTS]
    cdef int investors[POSITIONS]
    cdef int influence[SLOTS][MAX_PLAYERS]
    cdef int agents_at[SLOTS][MAX_PLAYERS]
    cdef int turn_order[MAX_PLAYERS]
    cdef int n_turn
    cdef int next_order[MAX_PLAYERS]
    cdef int n_next
    cdef int final_scores[MAX_PLAYERS]
    cdef int investor_points[MAX_PLAYERS]
    cdef bint resigned[MAX_PLAYERS]
    # The match around the game: events written so far, the seed future draws come from, and
    # whether GameEnded is written (status "over").
    cdef readonly long version
    cdef public str seed
    cdef readonly bint ended

    # ---- set-up (SentientRules.setup, at StartGame) --------------------------------------

    @staticmethod
    def started(Tables tables, int num_players, str seed, long version):
        """The game as StartGame leaves it when the log is at `version` before it: GameStarted and
        the set-up events are written with the draws of version + 1."""
        if not 2 <= num_players <= MAX_PLAYERS:
            raise ValueError(f"Sentient takes 2 to 4 players, not {num_players}")
        cdef Core g = Core.__new__(Core)
        cdef int i
        cdef int sides[MAX_INVESTORS]
        cdef int order[MAX_PLAYERS]
        g.t = tables
        g.n = num_players
        g.seed = seed
        g.current = -1
        g.version = version + 1  # GameStarted
        for i in range(num_players):
            g.resigned[i] = False
            g.players[i].vp = 0
            g.players[i].n_investors = 0
            g.players[i].n_collected = 0
        for i in range(SLOTS):
            g.factory[i] = -1
        for i in range(POSITIONS):
            g.investors[i] = -1
        g.n_discard = 0
        cdef Stream rng = _for_version(seed, version + 1)
        for i in range(tables.n_sides):
            sides[i] = i
        rng.shuffle(sides, tables.n_sides)
        for i in range(num_players):  # BoardsDealt
            g.players[i].side = sides[i]
            g.players[i].start_type = tables.side_type[sides[i]]
        g.version += 1
        for i in range(tables.n_cards):  # DeckShuffled
            g.deck[i] = i
        rng.shuffle(g.deck, tables.n_cards)
        g.deck_head = 0
        g.deck_end = tables.n_cards
        g.version += 1
        for i in range(num_players):
            order[i] = i
        rng.shuffle(order, num_players)
        g.prepare_round(1, order, rng)
        return g

    cdef int prepare_round(self, int round_no, int* order, Stream rng) except -1:
        cdef int i, k, r = round_no - 1
        cdef int investors[MAX_INVESTORS]
        cdef int all_slots[SLOTS]
        cdef Player* p
        for i in range(self.t.round_size[r]):
            investors[i] = self.t.round_investors[r][i]
        rng.shuffle(investors, self.t.round_size[r])
        # RoundStarted
        self.round = round_no
        for i in range(self.n):
            self.turn_order[i] = order[i]
        self.n_turn = self.n
        self.n_next = 0
        for i in range(POSITIONS):
            self.investors[i] = investors[i] if i < self.t.round_size[r] else -1
        for i in range(SLOTS):
            for k in range(self.n):
                self.influence[i][k] = 0
                self.agents_at[i][k] = 0
        for i in range(self.n):
            p = &self.players[i]
            p.agents = AGENTS_PER_ROUND
            p.assistants = MAX_ASSISTANTS
            p.passed = False
            for k in range(SLOTS):
                p.network[k] = -1
        self.current = self.turn_order[0] if self.n_turn else -1
        self.version += 1
        for i in range(SLOTS):
            all_slots[i] = i + 1
        self.draw(all_slots, SLOTS, rng)
        for i in range(self.n):  # DiceRolled
            for k in range(DICE):
                self.players[i].dice[k] = rng.below(6) + 1
            self.version += 1
        return 0

    cdef int draw(self, int* slots, int count, Stream rng) except -1:
        """SentientRules._draw: fill `slots` from the deck, reshuffling the discard pile when it
        runs out; each FactoryRefilled and DeckShuffled is one event."""
        cdef int pending_slots[SLOTS]
        cdef int pending = 0
        cdef int i, k, slot
        for i in range(count):
            slot = slots[i]
            if self.deck_end - self.deck_head <= pending:
                if pending:
                    self.refill(pending_slots, pending)
                    pending = 0
                if self.n_discard == 0:
                    continue
                for k in range(self.n_discard):
                    self.deck[k] = self.discard[k]
                rng.shuffle(self.deck, self.n_discard)
                self.deck_head = 0
                self.deck_end = self.n_discard
                self.n_discard = 0
                self.version += 1
            pending_slots[pending] = slot
            pending += 1
        if pending:
            self.refill(pending_slots, pending)
        return 0

    cdef void refill(self, int* slots, int count):
        cdef int k
        for k in range(count):
            self.factory[slots[k] - 1] = self.deck[self.deck_head + k]
        self.deck_head += count
        self.version += 1

    # ---- moves ---------------------------------------------------------------------------

    def play(self, int seat, object action):
        """Apply `action` for `seat` as the referee would, forced moves of resigned seats and the
        end of the game included: True when applied; False when the core leaves it to the Python
        rules (a refusal, whose reason they give, or an input it does not model)."""
        if self.ended or not 0 <= seat < self.n or self.resigned[seat]:
            return False
        kind = type(action)
        if kind is c.Acquire:
            fs, ns, a = action.factory_slot, action.network_slot, action.assistants
            bl, br = action.block_left, action.block_right
            if not (type(fs) is int and type(ns) is int and type(a) is int and type(bl) is bool and type(br) is bool):
                return False
            if not (1 <= fs <= SLOTS and 1 <= ns <= SLOTS and 0 <= a <= MAX_ASSISTANTS):
                return False
            if not self.acquire(seat, fs, ns, a, bl, br):
                return False
        elif kind is c.Pass:
            if not self.pass_turn(seat):
                return False
        elif kind is lc.Resign:
            self.version += 1  # PlayerResigned
            self.resigned[seat] = True
        else:
            return False
        self.after()
        return True

    cdef int acquire(self, int seat, int fs, int ns, int a, bint bl, bint br) except -1:
        cdef Player* p = &self.players[seat]
        if self.current != seat or p.agents <= 0:
            return False
        cdef int card = self.factory[fs - 1]
        if card < 0 or p.network[ns - 1] >= 0:
            return False
        if (bl and self.t.left[card] == 0) or (br and self.t.right[card] == 0):
            return False
        cdef int spent = a + bl + br
        if spent > p.assistants:
            return False
        cdef Stream rng = _for_version(self.seed, self.version)
        # CardAcquired
        self.factory[fs - 1] = -1
        p.network[ns - 1] = card
        p.agents -= 1
        p.assistants -= spent
        self.influence[fs - 1][seat] += 1 + a
        self.agents_at[fs - 1][seat] += 1
        self.version += 1
        # DiceCalibrated
        if not bl:
            p.dice[ns - 1] = _calibrate(p.dice[ns - 1], self.t.left[card])
        if not br:
            p.dice[ns] = _calibrate(p.dice[ns], self.t.right[card])
        self.version += 1
        cdef int slot = fs
        self.draw(&slot, 1, rng)
        self.end_turn(seat, rng)
        return True

    cdef int pass_turn(self, int seat) except -1:
        cdef Player* p = &self.players[seat]
        if self.current != seat or p.passed:
            return False
        cdef Stream rng = _for_version(self.seed, self.version)
        cdef int i
        cdef int all_slots[SLOTS]
        # PlayerPassed: the marker goes on top of next round's stack.
        p.passed = True
        for i in range(self.n_next, 0, -1):
            self.next_order[i] = self.next_order[i - 1]
        self.next_order[0] = seat
        self.n_next += 1
        self.version += 1
        if p.agents > 0:
            for i in range(SLOTS):
                if self.factory[i] >= 0:
                    self.discard[self.n_discard] = self.factory[i]
                    self.n_discard += 1
                    self.factory[i] = -1
                all_slots[i] = i + 1
            self.draw(all_slots, SLOTS, rng)
        self.end_turn(seat, rng)
        return True

    cdef int next_seat(self, int seat):
        cdef int start = 0, k, candidate
        while self.turn_order[start] != seat:
            start += 1
        for k in range(1, self.n_turn + 1):
            candidate = self.turn_order[(start + k) % self.n_turn]
            if self.players[candidate].agents > 0 or not self.players[candidate].passed:
                return candidate
        return -1

    cdef int end_turn(self, int seat, Stream rng) except -1:
        self.current = self.next_seat(seat)  # TurnEnded
        self.version += 1
        if self.current < 0:
            self.end_round(rng)
        return 0

    cdef int end_round(self, Stream rng) except -1:
        cdef int seat, i, card, total, pos, best, second, s
        cdef int influence[MAX_PLAYERS]
        cdef int agents[MAX_PLAYERS]
        cdef int rank[MAX_PLAYERS]
        cdef int order[MAX_PLAYERS]
        cdef Player* p
        for seat in range(self.n):  # CardsScored
            p = &self.players[seat]
            total = 0
            for i in range(SLOTS):
                card = p.network[i]
                if card >= 0:
                    total += self.t.score(card, p.dice[i], p.dice[i + 1])
                    p.collected[p.n_collected] = card
                    p.n_collected += 1
                    p.network[i] = -1
            p.vp += total
            self.version += 1
        for i in range(self.n_turn):
            rank[self.turn_order[i]] = i
        for pos in range(POSITIONS):
            if self.investors[pos] < 0:
                continue
            for s in range(self.n):
                influence[s] = 0
                agents[s] = 0
                for i in range(pos - 1, pos + 1):
                    if 0 <= i < SLOTS:
                        influence[s] += self.influence[i][s]
                        agents[s] += self.agents_at[i][s]
            # scoring.rank_investor: most influence, then most agents, then higher in turn order.
            best = -1
            second = -1
            for s in range(self.n):
                if influence[s] <= 0:
                    continue
                if best < 0 or _ahead(s, best, influence, agents, rank):
                    second = best
                    best = s
                elif second < 0 or _ahead(s, second, influence, agents, rank):
                    second = s
            # InvestorAwarded
            if best >= 0:
                p = &self.players[best]
                p.investors[p.n_investors] = self.investors[pos]
                p.n_investors += 1
            if second >= 0:
                self.players[second].vp += 1
            self.investors[pos] = -1
            self.version += 1
        # RoundEnded
        for i in range(SLOTS):
            if self.factory[i] >= 0:
                self.discard[self.n_discard] = self.factory[i]
                self.n_discard += 1
                self.factory[i] = -1
        for i in range(POSITIONS):
            self.investors[i] = -1
        for i in range(self.n_next):
            self.turn_order[i] = self.next_order[i]
            order[i] = self.next_order[i]
        self.n_turn = self.n_next
        self.n_next = 0
        self.current = -1
        self.version += 1
        if self.round < ROUNDS:
            self.prepare_round(self.round + 1, order, rng)
        else:
            self.totals(self.final_scores, self.investor_points)
            self.over = True
            self.version += 1  # GameFinished
        return 0

    cdef void totals(self, int* scores, int* points):
        """SentientRules._totals: VP plus one per collected card of each held investor's type."""
        cdef int seat, i, pts
        cdef int counts[5]
        cdef Player* p
        for seat in range(self.n):
            p = &self.players[seat]
            for i in range(5):
                counts[i] = 0
            for i in range(p.n_collected):
                counts[self.t.ctype[p.collected[i]]] += 1
            pts = counts[p.start_type]
            for i in range(p.n_investors):
                pts += counts[self.t.investor_type[p.investors[i]]]
            points[seat] = pts
            scores[seat] = p.vp + pts

    cdef int after(self) except -1:
        """games.match._after: resigned seats play their default action, then GameEnded and
        SeedRevealed once the game is over."""
        cdef int seat, fi, ni
        cdef bint done
        cdef Player* p
        while not self.over and self.current >= 0 and self.resigned[self.current]:
            seat = self.current
            self.version += 1  # DefaultActionForced
            p = &self.players[seat]
            if not p.passed:
                self.pass_turn(seat)
                continue
            done = False
            for fi in range(SLOTS):
                if self.factory[fi] < 0:
                    continue
                for ni in range(SLOTS):
                    if p.network[ni] < 0:
                        done = self.acquire(seat, fi + 1, ni + 1, 0, False, False)
                        break
                break
            if not done:
                raise AssertionError(f"default action refused for seat {seat}")
        if self.over and not self.ended:
            self.ended = True
            self.version += 2
        return 0

    # ---- queries -------------------------------------------------------------------------

    def to_act(self):
        return [self.current] if not self.ended and self.current >= 0 else []

    def current_player(self):
        return self.current if not self.ended and self.current >= 0 else None

    def legal(self, int seat):
        """SentientRules.legal_actions, the same commands in the same order."""
        if self.over or self.ended or self.current != seat:
            return []
        cdef Player* p = &self.players[seat]
        cdef list out = [] if p.passed else [self.t.pass_]
        if p.agents <= 0:
            return out
        cdef list table = self.t.acquires
        cdef int fs, ns, bl, br, a, card, top, base
        for fs in range(SLOTS):
            card = self.factory[fs]
            if card < 0:
                continue
            for ns in range(SLOTS):
                if p.network[ns] >= 0:
                    continue
                for bl in range(2 if self.t.left[card] != 0 else 1):
                    for br in range(2 if self.t.right[card] != 0 else 1):
                        base = (((fs * SLOTS + ns) * 2 + bl) * 2 + br) * (MAX_ASSISTANTS + 1)
                        top = p.assistants - bl - br
                        for a in range(top + 1):
                            out.append(table[base + a])
        return out

    def winners(self):
        if not self.over:
            return []
        cdef int top = max([self.final_scores[i] for i in range(self.n)])
        return [i for i in range(self.n) if self.final_scores[i] == top]

    def scores(self):
        """rules.result(state).scores: the final totals, or the standing if it ended now."""
        cdef int scores[MAX_PLAYERS]
        cdef int points[MAX_PLAYERS]
        if self.over:
            return [self.final_scores[i] for i in range(self.n)]
        self.totals(scores, points)
        return [scores[i] for i in range(self.n)]

    def resigned_seats(self):
        return [bool(self.resigned[i]) for i in range(self.n)]

    # ---- copies --------------------------------------------------------------------------

    def copy(self):
        cdef Core g = Core.__new__(Core)
        g.t = self.t
        g.n = self.n
        g.round = self.round
        g.over = self.over
        g.current = self.current
        g.players = self.players
        g.deck = self.deck
        g.deck_head = self.deck_head
        g.deck_end = self.deck_end
        g.discard = self.discard
        g.n_discard = self.n_discard
        g.factory = self.factory
        g.investors = self.investors
        g.influence = self.influence
        g.agents_at = self.agents_at
        g.turn_order = self.turn_order
        g.n_turn = self.n_turn
        g.next_order = self.next_order
        g.n_next = self.n_next
        g.final_scores = self.final_scores
        g.investor_points = self.investor_points
        g.resigned = self.resigned
        g.version = self.version
        g.seed = self.seed
        g.ended = self.ended
        return g

    def redeal(self, str source):
        """games.sentient.determinize: the deck put in order of card id, then shuffled from the
        stream `source` ("determinize:<seed>:<version>")."""
        cdef int n = self.deck_end - self.deck_head
        cdef int* deck = &self.deck[self.deck_head]
        cdef int i, j, t
        # Insertion sort by id: at most 60 cards, once per determinization.
        for i in range(1, n):
            t = deck[i]
            j = i - 1
            while j >= 0 and self.t.id_rank[deck[j]] > self.t.id_rank[t]:
                deck[j + 1] = deck[j]
                j -= 1
            deck[j + 1] = t
        Stream(source).shuffle(deck, n)

    # ---- the Python state ----------------------------------------------------------------

    def state(self):
        """The SentientState the Python rules would hold (a new object each call)."""
        cards = self.t.card_ids
        cdef int i
        cdef Player* p
        players = []
        for i in range(self.n):
            p = &self.players[i]
            players.append(
                PlayerState(
                    board_side=self.t.side_ids[p.side],
                    starting_investor=CARD_TYPES[p.start_type],
                    dice=[p.dice[k] for k in range(DICE)],
                    network=[cards[p.network[k]] if p.network[k] >= 0 else None for k in range(SLOTS)],
                    agents=p.agents,
                    assistants=p.assistants,
                    passed=bool(p.passed),
                    vp=p.vp,
                    investors=[self.t.investor_ids[p.investors[k]] for k in range(p.n_investors)],
                    collected=[cards[p.collected[k]] for k in range(p.n_collected)],
                )
            )
        final = [self.final_scores[i] for i in range(self.n)] if self.over else []
        return SentientState(
            num_players=self.n,
            players=players,
            round=self.round,
            over=bool(self.over),
            deck=[cards[self.deck[k]] for k in range(self.deck_head, self.deck_end)],
            discard=[cards[self.discard[k]] for k in range(self.n_discard)],
            factory=[cards[self.factory[k]] if self.factory[k] >= 0 else None for k in range(SLOTS)],
            investors=[self.t.investor_ids[self.investors[k]] if self.investors[k] >= 0 else None for k in range(POSITIONS)],
            influence=[[self.influence[i][k] for k in range(self.n)] for i in range(SLOTS)],
            agents_at=[[self.agents_at[i][k] for k in range(self.n)] for i in range(SLOTS)],
            turn_order=[self.turn_order[k] for k in range(self.n_turn)],
            next_order=[self.next_order[k] for k in range(self.n_next)],
            current=self.current if self.current >= 0 else None,
            final_scores=final,
            winners=self.winners(),
            investor_points=[self.investor_points[i] for i in range(self.n)] if self.over else [],
        )


cdef inline bint _ahead(int s, int other, int* influence, int* agents, int* rank):
    if influence[s] != influence[other]:
        return influence[s] > influence[other]
    if agents[s] != agents[other]:
        return agents[s] > agents[other]
    return rank[s] < rank[other]
