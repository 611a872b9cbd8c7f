"""Every Sentient rule id and its text: the single source for refusals and docs/rules/sentient.md."""

from __future__ import annotations

from games.kit import refuser

RULES_TEXT: dict[str, str] = {
    # Set-up and round preparation (applied by the engine, never a refusal).
    "SEN-SETUP": (
        "2 to 4 players. Each gets a right-hand board side dealt at random (it prints a starting "
        "investor), a random turn-order stack is made, and the 60-card deck is shuffled."
    ),
    "SEN-ROUND-PREP": (
        "At the start of each of the 3 rounds: 4 cards are drawn into factory slots 1..4, the round's 5 "
        "investors (each with a 1-VP chip) are laid at positions 0..4 around them, every player rolls "
        "their 5 dice and takes back 4 agents and 5 assistants."
    ),
    "SEN-DECK": ("When a card must be drawn from an empty deck, the discard pile is shuffled to make a new deck."),
    # Turns.
    "SEN-TURN": (
        "Players act one at a time, from the top of the round's turn-order stack downwards and "
        "repeating; a player with nothing left to do is skipped. Only the player to act may act."
    ),
    # Acquire.
    "SEN-ACQUIRE-AGENT": (
        "Acquiring a bot places one of your agents; with no agent left you cannot acquire (you pass "
        "if you have not passed this round)."
    ),
    "SEN-ACQUIRE-FACTORY": "The agent is placed on a card in the factory: slot 1..4, holding a card.",
    "SEN-CONNECT-SLOT": (
        "The card is connected to a network slot 1..4 (slot i lies between die i-1 and die i) that "
        "has not received a card this round."
    ),
    "SEN-CALIBRATE": (
        "After connecting, each + corner raises and each - corner lowers the adjacent die by 1 (6 + 1 "
        "wraps to 1, 1 - 1 wraps to 6); = leaves it."
    ),
    "SEN-ASSISTANTS": (
        "Each player has 5 assistants per round. Each one is spent either as +1 influence with the "
        "agent being placed or to block one corner of the card being connected; you cannot spend "
        "more than you hold, nor a negative number."
    ),
    "SEN-BLOCK": (
        "An assistant may block only a + or - corner of the card being connected (at most one per "
        "corner, so two per card); blocking an = corner is not allowed."
    ),
    # Pass.
    "SEN-PASS-ONCE": ("You may pass only once per round; a player who has passed but still holds agents must acquire."),
    "SEN-PASS": (
        "Passing puts your spare turn-order marker on top of the next round's stack. If you still hold "
        "an agent, the factory cards are discarded and 4 new cards drawn; with no agent left you must "
        "pass and nothing is discarded."
    ),
    # Round end and game end.
    "SEN-ROUND-END": "The round ends when every player has placed 4 agents and passed once.",
    "SEN-SCORE-CARDS": (
        "Each player scores each card connected this round from its two adjacent dice; the cards then "
        "leave the network and are kept for the end of the game."
    ),
    "SEN-INVESTORS": (
        "Each investor goes to the highest combined influence (> 0) on its adjacent factory slots and "
        "its 1-VP chip to the second highest (> 0); ties go to more agents there, then to the player "
        "higher in the current round's turn order."
    ),
    "SEN-CLEANUP": (
        "After scoring rounds 1 and 2, leftover factory cards are discarded, unclaimed investors and "
        "chips removed, and the next round's stack becomes the turn order."
    ),
    "SEN-FINAL": (
        "After round 3: score = VP + for each investor held (the printed starting one included) 1 point "
        "per collected card of its type. The highest total wins; equal totals share the win."
    ),
}

REFUSAL_RULES: tuple[str, ...] = (
    "SEN-TURN",
    "SEN-ACQUIRE-AGENT",
    "SEN-ACQUIRE-FACTORY",
    "SEN-CONNECT-SLOT",
    "SEN-ASSISTANTS",
    "SEN-BLOCK",
    "SEN-PASS-ONCE",
)


reject = refuser(RULES_TEXT)
