"""Every Mechanica rule id and its text: the single source for refusals and docs/rules/mechanica.md."""

from __future__ import annotations

from games.kit import refuser

RULES_TEXT: dict[str, str] = {
    # Set-up and the workday (applied by the engine, never a refusal).
    "MEC-SETUP": (
        "1 to 4 players. Each gets a factory board, a vault, 8 money in the wallet and a Basic bot in "
        "the hole of the Basic Fabricator. The 27 improvements are shuffled: 6 go to the Extras, 21 to "
        "the stack; the top two go onto the shop's 7 and 5 spaces. The blueprints are shuffled into "
        "piles of 7 and 8 and the top card of each is turned face up. A random player goes first."
    ),
    "MEC-WORKDAY": (
        "A workday starts at the beginning of the game and again after every player has taken a "
        "turn: all factories run at once, then each player, from the first player on in seat order, "
        "takes one full turn."
    ),
    "MEC-RUN-MOVE": (
        "Running a factory, step 1: every bot moves along the conveyor arrows until it reaches a free "
        "hole, where it stops for the workday. Bots in trucks do not move, nor do bots waiting in an "
        "improvement's input holes; a bot with no free hole ahead of it, all the way into its truck, "
        "stays where it is."
    ),
    "MEC-RUN-ORDER": (
        "All bots move at once: the bot nearest the dock along the belt moves first and frees its "
        "hole for those behind it; at equal distance the bot in the upper row moves first, and within "
        "a square the bot in the later hole. Each bot moves once per run."
    ),
    "MEC-RUN-ACTIVATE": (
        "Running a factory, step 2: every improvement holding bots in its input holes (an Assembler: "
        "in all of them) activates, in reading order. It destroys the bots in its input holes and "
        "fills its free output holes with the bots it makes; bots that find no free output hole go "
        "back to the supply. A bot an improvement makes never activates another one the same run."
    ),
    "MEC-EFFECTS": (
        "Duplicator: each input bot becomes two of its model. Upgrader: one model better (a Deluxe "
        "stays Deluxe). Splitter: two bots one model worse (a Basic stays one Basic). Downgrader: one "
        "model worse (a Basic becomes nothing) and its money into the wallet. Gift Wrapper: the bot's "
        "sale value plus its money into the vault. Assembler: its input bots become one bot a model "
        "better than the best of them. Fabricators and trucks do not activate."
    ),
    "MEC-TURN-STEPS": (
        "On your turn you do in order: 1 sell bots from your trucks, 2 buy improvements, 3 make bots, "
        "4 rotate the shop (steps 3 and 4 are the end of the turn). Blueprints, trucks and forks may "
        "be done at any time during your turn."
    ),
    "MEC-SELL-VALUE": (
        "A bot sold from a truck pays its model's value into the wallet: Basic 2, Plus 4, Deluxe 6, "
        "plus the truck's bonus for an Armored Truck."
    ),
    "MEC-INSTALL": (
        "A bought improvement is installed or recycled. Fabricators go on a start-zone square, trucks "
        "on a dock square, every other improvement on any floor square. Installing on an occupied "
        "square demolishes what stood there (an improvement is discarded, a big or huge truck goes "
        "back to the supply); bots stay in the holes the new piece also has, the rest go back to the "
        "supply. Installed improvements never move."
    ),
    "MEC-RECYCLE": (
        "A recycled improvement goes into the Recycler; the bots of its recycle value go, in order, "
        "into free start-zone holes the player chooses (one bot per hole); bots beyond the free holes "
        "go back to the supply."
    ),
    "MEC-MAKE": (
        "Making bots: a bot of the fabricator's model goes into the centre hole of each of your "
        "fabricators whose hole is free. An Overactive Fabricator also gives each other player a "
        "Basic bot in the first free hole of their start zone, top first."
    ),
    "MEC-ROTATE": (
        "Rotating the shop: every improvement moves one space cheaper, then the top improvement of "
        "the stack goes onto the 7 space."
    ),
    "MEC-RECYCLER": (
        "An improvement that falls off the cheapest space into the Recycler is recycled for the "
        "active player, who places its bots into free start-zone holes (EndTurn rows)."
    ),
    "MEC-DOUBLE": (
        "With 2 or 3 players only: if after rotating the only improvement in the shop is on the 7 "
        "space, the shop rotates a second time and the next improvement of the Extras goes onto the "
        "7 space (while the Extras last)."
    ),
    "MEC-EXTRAS": (
        "With 1 to 3 players the stack is used and the Extras only for the double rotation; with 4 "
        "players, once the stack is empty new improvements come from the Extras."
    ),
    "MEC-BLUEPRINT-DONE": (
        "Completing a blueprint returns the listed bots from your trucks to the supply and puts the "
        "blueprint's money into your vault (it never leaves the vault); both blueprints turn sideways. "
        "At the end of a workday sideways blueprints go to the bottom of their piles and the next "
        "cards are turned up; until then other players may still complete them."
    ),
    "MEC-TRUCKS": (
        "Big trucks cost 3 and hold 2 bots, huge trucks cost 5 and hold 3; either replaces a small "
        "truck (bots in it stay). A big truck becomes huge for 3 (the big one returns to the box). "
        "Trucks can always be bought and never change price."
    ),
    "MEC-FORKS": (
        "A fork costs 1, can always be bought and never changes price; it stands on a floor square: "
        "every bot leaving that square follows the fork's output arrow (up, down or right) instead of "
        "the printed one. The factory run uses the settings, so it needs nobody's input."
    ),
    "MEC-END": (
        "At the end of a workday the game ends if the stack is empty (with 4 players, the Extras too) "
        "and the shop holds no improvement."
    ),
    "MEC-SCORE": (
        "Each player's total is wallet + vault + the end values of their installed improvements. The "
        "highest total wins; ties go to the larger vault; still tied, the win is shared."
    ),
    # Refusals.
    "MEC-TURN": "Only the player whose turn it is may act.",
    "MEC-COMMAND": (
        "On your turn you may sell, install or recycle an improvement, complete a blueprint, buy a "
        "truck or a fork, turn a fork, or end the turn."
    ),
    "MEC-SELL": "You sell only a bot that is in one of your trucks, naming its dock row and its model.",
    "MEC-SELL-FIRST": "Selling is step 1 of the turn: once you have bought an improvement you can no longer sell.",
    "MEC-SHOP": "You buy only an improvement that is in the shop, naming the price of its space (7, 5, 3 or 1).",
    "MEC-MONEY": "You pay from your wallet and cannot spend more than it holds.",
    "MEC-INSTALL-PLACE": (
        "Fabricators go on a start-zone square, trucks on a dock square, other improvements on a "
        "floor square; the square must exist."
    ),
    "MEC-RECYCLE-ROWS": (
        "Recycle bots go into distinct free start-zone holes, named by row, one per bot in order, as "
        "many as there are free holes (none when nothing is recycled)."
    ),
    "MEC-BLUEPRINT": (
        "A blueprint is completed from a pile (1 or 2) with a face-up card, naming for each bot it "
        "lists the dock row of a truck holding a bot of that model."
    ),
    "MEC-BLUEPRINT-ONCE": (
        "Each player may complete each blueprint at most once in the game, even when the card comes face up again."
    ),
    "MEC-TRUCK": (
        "A big or huge truck is bought for a dock square holding a small truck; only a big truck is "
        "upgraded to a huge one."
    ),
    "MEC-FORK-SQUARE": "A fork is bought for a floor square without a fork, and turned only where you have one.",
    "MEC-FORK-ARROW": (
        "A fork's output arrow points up, down or right onto another square of the board, and the "
        "belt must still lead every bot to the dock without running in a circle."
    ),
    "MEC-FORK-ONCE": "Each of your forks may be turned once per turn, to an arrow other than its current one.",
}

REFUSAL_RULES: tuple[str, ...] = (
    "MEC-TURN",
    "MEC-COMMAND",
    "MEC-SELL",
    "MEC-SELL-FIRST",
    "MEC-SHOP",
    "MEC-MONEY",
    "MEC-INSTALL-PLACE",
    "MEC-RECYCLE-ROWS",
    "MEC-BLUEPRINT",
    "MEC-BLUEPRINT-ONCE",
    "MEC-TRUCK",
    "MEC-FORK-SQUARE",
    "MEC-FORK-ARROW",
    "MEC-FORK-ONCE",
)


reject = refuser(RULES_TEXT)
