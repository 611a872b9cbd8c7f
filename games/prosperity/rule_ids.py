"""Every Prosperity rule id and its text: the single source for refusals and docs/rules/prosperity.md."""

from __future__ import annotations

from games.kit import refuser

RULES_TEXT: dict[str, str] = {
    # Set-up (applied by the engine, never a refusal).
    "PRO-SETUP": (
        "2 to 4 players. The 24 undated tiles lie face up on the research board by side and level; "
        "each player takes 100 euros, puts a research marker on the lowest space of both research "
        "tracks and 8 discs on the lowest round spaces of the pollution track; a first player is "
        "chosen at random."
    ),
    "PRO-DECK": (
        "The decade tiles are shuffled decade by decade and stacked with 2030 at the bottom, then "
        "2020 ... and the five 1970 tiles on top."
    ),
    "PRO-BOARD-CHOICE": (
        "Each player chooses to play their individual board silver side (normal) or black side "
        "(hard) up; play starts when every player has chosen."
    ),
    # A turn.
    "PRO-TURN": (
        "The game lasts 36 turns. In a turn the active player draws the top tile of the deck, every "
        "player counts the symbol it highlights, the tile joins the research board, then the active "
        "player takes two actions; play passes clockwise."
    ),
    "PRO-COUNT": (
        "Starting with the active player and going clockwise, every player counts the highlighted "
        "symbol on their own board; a player who must choose how to count is waited for before the "
        "next player counts."
    ),
    "PRO-COUNT-ENERGY": (
        "Energy count: a positive energy total gains 50 euros per level; a negative total costs, for "
        "each level, either 100 euros or a disc added to the pollution track, in any mix."
    ),
    "PRO-COUNT-ECOLOGY": (
        "Ecology count: a positive ecology total removes one disc per level, and gains 50 euros for "
        "each disc still to remove once the track is empty; a negative total adds one disc per level."
    ),
    "PRO-COUNT-CAPITAL": "Capital count: 100 euros per capital symbol visible on the board.",
    "PRO-COUNT-RESEARCH": (
        "Research count: one step per research symbol visible on the board, split freely between "
        "the two research tracks."
    ),
    "PRO-COUNT-PROSPERITY": (
        "Prosperity count: one point per prosperity symbol visible on the board, including those "
        "uncovered on the pollution track; none while a disc sits on the last space of the track."
    ),
    "PRO-POLLUTION": (
        "Discs are removed from the highest occupied space and added from the lowest free round "
        "space up; the last, triangular space takes any number of discs."
    ),
    "PRO-FILE": "After the count the drawn tile joins the research board by its side and level.",
    "PRO-ACTIONS": (
        "The active player takes 2 actions, the same one twice or two different ones: income, "
        "clean-up, research or buying a tile."
    ),
    "PRO-INCOME": "Income: take 100 euros from the bank.",
    "PRO-PRICE": (
        "A tile's price compares its level with your marker on the research track of its side: same "
        "level 100 euros; higher, 100 euros plus 100 per extra level; lower, 50 euros."
    ),
    "PRO-PLACE": (
        "A bought tile goes on a space of its colour on your board (power plant pink, supplies "
        "yellow, transport green, infrastructure blue), empty or covering a tile whose symbols no "
        "longer count."
    ),
    "PRO-SPECIAL-EFFECT": (
        "A special tile is not placed: its effect (1 or 2 prosperity points, or removing 3 discs) "
        "applies at once and the tile is discarded."
    ),
    "PRO-TOTALS": (
        "After a tile is placed, the energy and ecology totals are those of the symbols visible on the board."
    ),
    "PRO-END": "The game ends after the turn of the player who drew the last tile.",
    "PRO-FINAL": (
        "Final scoring, in order: energy counted twice, ecology counted twice, capital counted once, "
        "then every 300 euros become 1 point (the rest is kept), research (both markers advance by the "
        "research symbols, then each track's majority), prosperity counted once."
    ),
    "PRO-MAJORITY": (
        "On each research track the highest marker scores 3 points and the second 1; tied leaders "
        "score 2 each and nobody scores second place; players tied for second score nothing."
    ),
    "PRO-WINNER": (
        "The most prosperity points wins; a tie goes to the most money left; still tied, the win is shared."
    ),
    # Refusals.
    "PRO-WAIT": (
        "Only a seat the game waits for may act: in set-up, each seat that has not chosen its board; "
        "during a count, the seat whose choice is pending; otherwise the active player."
    ),
    "PRO-EXPECTED": (
        "A seat sends what the game waits for from it: a board side in set-up, the pending count's "
        "choice (SettleEnergy for energy, SplitResearch for research), else one of the four actions."
    ),
    "PRO-BOARD": "A board is played with one of its two sides up: silver or black.",
    "PRO-SETTLE": (
        "A negative energy count takes between 0 and all of its levels as discs and pays 100 euros "
        "for each other level; nobody pays money they do not have."
    ),
    "PRO-SPLIT": (
        "Research steps are split between the tracks without passing the top of either, unless both "
        "tracks cannot take them all."
    ),
    "PRO-CLEANUP": "Clean-up removes the highest disc of your pollution track: there must be one.",
    "PRO-RESEARCH": "Research advances your marker one space on the energy or ecology track, not past its top.",
    "PRO-BUY": "A tile is bought from the research board.",
    "PRO-FUNDS": "You pay a tile's price in full: you need at least that much money.",
    "PRO-SPACE": (
        "A placed tile goes on a space of your board that exists and has the tile's colour; a special "
        "tile names no space."
    ),
    "PRO-TRANSPORT": (
        "A blue space marked as unusable takes a tile only once a transport tile covers the green space that marks it."
    ),
}

REFUSAL_RULES: tuple[str, ...] = (
    "PRO-WAIT",
    "PRO-EXPECTED",
    "PRO-BOARD",
    "PRO-SETTLE",
    "PRO-SPLIT",
    "PRO-CLEANUP",
    "PRO-RESEARCH",
    "PRO-BUY",
    "PRO-FUNDS",
    "PRO-SPACE",
    "PRO-TRANSPORT",
)


reject = refuser(RULES_TEXT)
