"""Every Artifacts, Inc. rule id and its text: the single source for refusals and docs/rules/artifacts.md.

A text names each number or card that comes from the component data by a `{placeholder}`; a
refusal fills them in from the data in use (`rule_text`), so correcting the data file corrects the
texts too. docs/rules/artifacts.md quotes the texts with their placeholders and lists the shipped
values (a generated block).
"""

from __future__ import annotations

from games.artifacts.components import MARKET_DECKS, ArtifactsData
from games.base import Rejected

RULES_TEXT: dict[str, str] = {
    # Set-up (applied by the engine, never a refusal).
    "ART-SETUP": (
        "2 to 4 players. The six public cards go in a row, museums on their {boxes_2p}-box side with 2 "
        "players and their {boxes_3p}-box side with 3 or 4; the underwater cards are stacked in "
        "numerical order, lowest on top; decks A to E are shuffled and show {market} cards face up: "
        "in rows A, B and C the cards drawn into the row and the top of the pile, in stacks D and E "
        "the top card."
    ),
    "ART-FIRST": (
        "Every player rolls {first_player_dice} dice; the highest sum plays first (tied players roll "
        "again) and play goes clockwise. Starting dollars by position in turn order: {starting_money}."
    ),
    "ART-ARRANGE": (
        "Before the first turn, each player in turn order lays their starting cards ({starting_cards}), "
        "Level 1 up, side by side in the top row in an order of their choice; the command must list "
        "exactly those cards."
    ),
    # Turns.
    "ART-TURN": "Players take turns one at a time in turn order; only the player to act may act.",
    "ART-PHASE": (
        "Starting cards are arranged only before the first turn, and dice are placed only after "
        "every player has arranged them."
    ),
    "ART-ROLL": (
        "A turn starts with the automatic roll of one die per adventurer symbol on the player's face-up "
        "cards (at most the {dice_in_box} dice in the box); the values are recorded."
    ),
    "ART-DIE": "Dice are placed one at a time, each of them one of your rolled dice not yet placed this turn.",
    "ART-SLOT": (
        "A die goes on an action slot of one of your own asset cards or of a public card (Dive: the "
        "reputation board); each slot takes one die per turn."
    ),
    "ART-ACTION": (
        "The command must be the one for the slot's action: UseAction for expeditions, dollar actions "
        "and Guide Work, Buy or Upgrade for a buy action, SellToMuseum for a museum, SellToCollectors "
        "for Private Collectors, Dive for the dive."
    ),
    "ART-REQUIREMENT": "The die must meet the action's requirement (e.g. 4 or more, exactly 1, odd, not a 2).",
    "ART-RESOLVE": "Each action is carried out as soon as its die is placed.",
    "ART-END-TURN": (
        "The turn ends when the player says so or has placed every die; unplaced dice are lost and all "
        "dice leave the cards."
    ),
    # Actions.
    "ART-EXPEDITION": (
        "An expedition gives artifact cubes of the card's kind; dollar actions give dollars. Amounts "
        "printed per adjacent card or per underwater find count the cards and finds at that moment."
    ),
    "ART-MARKET": (
        "A buy action buys one of the face-up cards of decks A to E (in rows A, B and C also the top of "
        "the pile); the gap is refilled from the same deck while it has cards."
    ),
    "ART-COST": (
        "Buying or upgrading pays the card's cost in dollars, plus a scroll from your artifacts when the "
        "card asks for one; you cannot pay more than you hold."
    ),
    "ART-LAYOUT": (
        "A new asset card is placed face up, Level 1 up, in the top row (1) or the bottom row (2), on an "
        "empty place sharing a side with a card you own; placed cards never move."
    ),
    "ART-UPGRADE": (
        "Instead of buying, a buy action may turn one of your own asset cards showing Level 1 to its "
        "Level 2 side for its cost again; dice and cubes on it stay (a used slot stays used)."
    ),
    "ART-MUSEUM": (
        "A museum sale fills one open order box of the museum's face-up side with a cube; the box is "
        "closed for the rest of the game."
    ),
    "ART-ARTIFACTS": (
        "A sale discards artifacts you hold, never more of a kind than you hold; a museum order takes "
        "exactly the box's number of the museum's kind and pays 1 dollar each plus the museum's bonus."
    ),
    "ART-COLLECTORS": (
        "Private Collectors buys any mix of at least one artifact you hold: {collectors_per_artifact} "
        "dollar(s) per artifact plus {collectors_per_kind} dollar(s) per kind beyond the first."
    ),
    "ART-GUIDE": "Guide Work gives the dollars printed on it.",
    "ART-DIVE-STACK": "Diving takes the top underwater card; with the stack empty there is nothing to dive for.",
    "ART-DIVE-ONCE": "A player never gains more than one underwater card per turn.",
    "ART-DIVE-SUM": (
        "Dive takes one or more dice whose sum is at least the number of the top underwater card (the "
        "only action that adds dice together)."
    ),
    "ART-UNDERWATER": (
        "An underwater card is worth {dive_reputation} reputation and shows a find (pottery, doubloons or "
        "sunken city); it sits aside, not in the rows of asset cards."
    ),
    # Reputation and the end.
    "ART-REPUTATION": (
        "A player's reputation always equals the total visible on their face-up cards (icons and "
        "abilities), underwater cards and museum majorities; the track cube is moved whenever it changes."
    ),
    "ART-END": (
        "When a player reaches {end_reputation} reputation, the round is finished so that every player "
        "has had the same number of turns, then the game ends."
    ),
    "ART-MAJORITY": (
        "At the end, each museum's majority reputation goes to the player with most cubes on it; a tie "
        "goes to the tied player whose cube is in the later box (reading order from the top-left box)."
    ),
    "ART-ROUND-CAP": (
        "Own ruling: should nobody reach {end_reputation} reputation, the game also ends after round "
        "{max_rounds}, so that a game whose seats all stopped playing still ends."
    ),
    "ART-WINNER": "The most reputation wins; a tie goes to the most dollars; still tied, the win is shared.",
}

REFUSAL_RULES: tuple[str, ...] = (
    "ART-TURN",
    "ART-PHASE",
    "ART-ARRANGE",
    "ART-DIE",
    "ART-SLOT",
    "ART-ACTION",
    "ART-REQUIREMENT",
    "ART-MARKET",
    "ART-COST",
    "ART-LAYOUT",
    "ART-UPGRADE",
    "ART-MUSEUM",
    "ART-ARTIFACTS",
    "ART-COLLECTORS",
    "ART-DIVE-STACK",
    "ART-DIVE-ONCE",
    "ART-DIVE-SUM",
)


def _numbers(values: list[int]) -> str:
    return "/".join(str(n) for n in sorted(set(values)))


def placeholders(data: ArtifactsData) -> dict[str, str]:
    """The value of every `{placeholder}` of the rule texts, read from the component data."""
    t = data.table
    museums = list(data.museums.values())
    collectors = data.actions_of(data.collectors[0], 1)[data.collectors[1] - 1]
    return {
        "boxes_2p": _numbers([len(m.boxes_2p) for m in museums]),
        "boxes_3p": _numbers([len(m.boxes_3p) for m in museums]),
        "market": ", ".join(f"{d} {t.market_slots[d]}" for d in MARKET_DECKS),
        "first_player_dice": str(t.first_player_dice),
        "starting_money": ", ".join(str(n) for n in t.starting_money),
        "starting_cards": ", ".join(data.assets[x].lv1.name for x in data.starting_ids),
        "dice_in_box": str(t.dice_in_box),
        "collectors_per_artifact": str(collectors.amount),
        "collectors_per_kind": str(collectors.per),
        "dive_reputation": str(t.dive_reputation),
        "end_reputation": str(t.end_reputation),
        "max_rounds": str(t.max_rounds),
    }


def rule_text(rule: str, data: ArtifactsData) -> str:
    """The rule's text with the data's values in place of its placeholders."""
    return RULES_TEXT[rule].format_map(placeholders(data))


def reject(data: ArtifactsData, rule: str, detail: str) -> Rejected:
    return Rejected(rule=rule, text=rule_text(rule, data), detail=detail)
