// Events and commands in plain words. Names and values come from the game's catalog (its data
// file) and the seats' names; an event type without a sentence here is written from its fields.

import { titleCase } from "./dom.js";

const list = (xs) => (xs.length <= 1 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs.at(-1)}`);
const plural = (n, one, many = one + "s") => `${n} ${n === 1 ? one : many}`;

// The names of things, by id, from a catalog's data (cards, tiles, improvements, museums...).
export function namer(title, data) {
  const names = new Map();
  if (!data) return (id) => id;
  if (title === "prosperity") for (const t of data.tiles) names.set(t.id, t.name);
  if (title === "mechanica") {
    for (const k of data.kinds) names.set(k.id, k.name);
    names.set("basic_fabricator", "Basic Fabricator");
  }
  if (title === "artifacts") {
    for (const a of data.assets) names.set(a.id, a.lv1.name);
    for (const m of data.museums) names.set(m.id, m.name);
    for (const p of data.public) names.set(p.id, p.name);
  }
  if (title === "sentient") for (const c of data.cards) names.set(c.id, `${titleCase(c.type)} ${c.id}`);
  return (id) => {
    if (id === null || id === undefined || id === "") return "nothing";
    if (names.has(id)) return names.get(id);
    // Mechanica tiles are "<kind>-<n>".
    const kind = String(id).replace(/-\d+$/, "");
    return names.has(kind) ? `${names.get(kind)} (${id})` : String(id);
  };
}

function lifecycle(type, p, who) {
  switch (type) {
    case "GameCreated":
      return `Game created: ${titleCase(p.game_type)} for ${p.num_players} players (seed committed: ${p.seed_commitment.slice(0, 12)}…)`;
    case "SeatJoined":
      return `${p.name} (${p.kind}) took seat ${p.seat}`;
    case "GameStarted":
      return "The game started";
    case "PlayerResigned":
      return `${who(p.seat)} resigned`;
    case "DefaultActionForced":
      return `${who(p.seat)} ran out of time: ${p.command_type.split(".").pop()} played for them (${p.reason})`;
    case "GameEnded":
      return `Game over: ${p.scores.map((s, i) => `${who(i)} ${s}`).join(", ")}; ${list(p.winners.map(who))} won`;
    case "SeedRevealed":
      return `The seed was revealed: ${p.seed}`;
    case "CommandRejected":
      return `Refused ${p.command_type.split(".").pop()}${p.seat !== null ? " from " + who(p.seat) : ""}: ${p.rule}${p.detail ? " (" + p.detail + ")" : ""}`;
    default:
      return null;
  }
}

function sentient(type, p, who, name) {
  const dice = (v) => v.join(" ");
  switch (type) {
    case "BoardsDealt":
      return `Board sides dealt: ${p.sides.map((s, i) => `${who(i)} ${s.replace("side-", "")}`).join(", ")}`;
    case "DeckShuffled":
      return p.from_discard ? `The discard pile was shuffled into a new deck of ${p.size}` : `The deck of ${p.size} cards was shuffled`;
    case "RoundStarted":
      return `Round ${p.round} began; turn order ${list(p.turn_order.map(who))}`;
    case "FactoryRefilled":
      return `Factory refilled: ${p.slots.map((s, i) => `slot ${s} ${name(p.cards[i])}`).join(", ")}`;
    case "DiceRolled":
      return `${who(p.seat)} rolled ${dice(p.values)}`;
    case "CardAcquired": {
      const blocks = [p.blocked_left && "left", p.blocked_right && "right"].filter(Boolean);
      return `${who(p.seat)} acquired ${name(p.card)} from factory slot ${p.factory_slot} into network slot ${p.network_slot}` +
        (p.assistants ? ` with ${plural(p.assistants, "assistant")}` : "") +
        (blocks.length ? `, blocking the ${list(blocks)} corner${blocks.length > 1 ? "s" : ""}` : "");
    }
    case "DiceCalibrated":
      return `${who(p.seat)}'s dice beside slot ${p.network_slot} went from ${dice(p.before)} to ${dice(p.after)}`;
    case "PlayerPassed":
      return `${who(p.seat)} passed` + (p.discarded.length ? `, discarding ${list(p.discarded.map(name))}` : "");
    case "TurnEnded":
      return p.next_seat === null ? `${who(p.seat)}'s turn ended; the round is over` : `${who(p.next_seat)} to play`;
    case "CardsScored":
      return `${who(p.seat)} scored ${p.total} for round ${p.round}` + (p.cards.length ? ` (${p.cards.map((c, i) => `${c} ${p.points[i]}`).join(", ")})` : "");
    case "InvestorAwarded":
      return `Investor ${titleCase(p.investor_type)} at position ${p.position} went to ${p.seat === null ? "nobody" : who(p.seat)}` +
        `, its chip to ${p.chip_seat === null ? "nobody" : who(p.chip_seat)}`;
    case "RoundEnded":
      return `Round ${p.round} ended; next turn order ${list(p.next_turn_order.map(who))}`;
    case "GameFinished":
      return `Final scores: ${p.scores.map((s, i) => `${who(i)} ${s}`).join(", ")}`;
    default:
      return null;
  }
}

function prosperity(type, p, who, name) {
  switch (type) {
    case "TableSet":
      return `Table set: ${p.research_board.length} tiles on the research board, ${who(p.first_player)} starts; everyone gets ${p.money} €`;
    case "DeckBuilt":
      return `The decade deck of ${p.size} tiles was built`;
    case "BoardChosen":
      return `${who(p.seat)} chose the ${p.side} board`;
    case "TileDrawn":
      return `${who(p.seat)} drew ${name(p.tile)} (turn ${p.turn}): everyone counts ${p.symbol}`;
    case "Counted": {
      const gains = [
        p.money && `${p.money > 0 ? "+" : ""}${p.money} €`,
        p.discs && `${p.discs > 0 ? "+" : ""}${plural(p.discs, "pollution disc")}`,
        p.points && `${p.points > 0 ? "+" : ""}${plural(p.points, "point")}`,
        p.energy_steps && `${p.energy_steps} energy research`,
        p.ecology_steps && `${p.ecology_steps} ecology research`,
      ].filter(Boolean);
      return `${who(p.seat)} counted ${p.symbol}${p.final ? " (final)" : ""}: ${gains.length ? list(gains) : "nothing"}`;
    }
    case "TileFiled":
      return `${name(p.tile)} went to the research board`;
    case "IncomeTaken":
      return `${who(p.seat)} took ${p.amount} € income`;
    case "CleanedUp":
      return `${who(p.seat)} cleaned up a pollution disc`;
    case "ResearchAdvanced":
      return `${who(p.seat)} researched ${p.track}`;
    case "TileBought":
      return `${who(p.seat)} bought ${name(p.tile)} for ${p.price} € onto ${p.space}` + (p.covered ? `, covering ${name(p.covered)}` : "");
    case "SpecialApplied":
      return `${who(p.seat)} used ${name(p.tile)} (${p.price} €)` + (p.points ? `: +${plural(p.points, "point")}` : "") +
        (p.discs_removed ? `: ${plural(p.discs_removed, "disc")} removed` : "");
    case "TurnEnded":
      return p.next_seat === null ? `${who(p.seat)}'s turn ended` : `${who(p.next_seat)} to play`;
    case "FinalScoringStarted":
      return `Final scoring, in the order ${list(p.order.map(who))}`;
    case "MoneyConverted":
      return `${who(p.seat)} turned ${p.money} € into ${plural(p.points, "point")} (${p.money_left} € left)`;
    case "ResearchMajority":
      return `${titleCase(p.track)} research: ${p.points.map((pt, i) => `${who(i)} +${pt}`).join(", ")}`;
    case "GameFinished":
      return `Final scores: ${p.scores.map((s, i) => `${who(i)} ${s}`).join(", ")}`;
    default:
      return null;
  }
}

function mechanica(type, p, who, name) {
  const at = (r, c) => `row ${r}, column ${c}`;
  switch (type) {
    case "GameSetUp":
      return `Factories set up: ${p.money} money each and a ${p.starting_bot} bot; ${who(p.first_player)} goes first`;
    case "ImprovementsShuffled":
      return `The improvements were shuffled: ${p.stack_size} in the stack, ${p.extras_size} in the Extras`;
    case "BlueprintsShuffled":
      return `The blueprints were shuffled into piles of ${list(p.sizes.map(String))}`;
    case "ImprovementDrawn":
      return `${name(p.improvement)} came onto the ${p.price} space of the shop`;
    case "WorkdayStarted":
      return `Workday ${p.workday} began`;
    case "BotsMoved":
      return `${who(p.seat)}'s belts moved ${plural(p.moves.length, "bot")}`;
    case "ImprovementActivated":
      return `${who(p.seat)}'s ${name(p.improvement)} at ${at(p.row, p.col)} turned ${list(p.consumed_models)} into ` +
        (p.made.length ? list(p.made.map((b) => b.model)) : "nothing") + (p.wallet ? `, +${p.wallet} wallet` : "") + (p.vault ? `, +${p.vault} vault` : "");
    case "TurnStarted":
      return `${who(p.seat)}'s turn`;
    case "BotSold":
      return `${who(p.seat)} sold a ${p.model} bot from the truck in row ${p.row} for ${p.money}`;
    case "ImprovementBought":
      return `${who(p.seat)} bought ${name(p.improvement)} for ${p.price}`;
    case "ImprovementInstalled":
      return `${who(p.seat)} installed ${name(p.improvement)} at ${at(p.row, p.col)}` + (p.replaced ? `, demolishing ${name(p.replaced)}` : "");
    case "ImprovementRecycled":
      return `${name(p.improvement)} was recycled for ${who(p.seat)}` + (p.placed.length ? `: ${list(p.placed.map((b) => b.model))} into the start zone` : "");
    case "BlueprintCompleted":
      return `${who(p.seat)} completed blueprint ${p.blueprint} (${list(p.models)}) for ${p.money} into the vault`;
    case "TruckBought":
      return `${who(p.seat)} bought a ${p.size} truck for row ${p.row} (${p.cost})`;
    case "ForkBought":
      return `${who(p.seat)} put a fork pointing ${p.direction} at ${at(p.row, p.col)} (${p.cost})`;
    case "ForkSet":
      return `${who(p.seat)} turned the fork at ${at(p.row, p.col)} ${p.direction}`;
    case "BotsMade":
      return `${who(p.seat)}'s fabricators made ${p.bots.length ? list(p.bots.map((b) => `${b.model} for ${who(b.seat)}`)) : "nothing"}`;
    case "ShopRotated":
      return `The shop turned${p.second ? " again" : ""}` + (p.fell ? `: ${name(p.fell)} fell into the Recycler` : "");
    case "TurnEnded":
      return p.next_seat === null ? `${who(p.seat)}'s turn ended; the workday is over` : `${who(p.next_seat)} to play`;
    case "BlueprintsReplaced":
      return `New blueprints face up: ${list(p.face_up)}`;
    case "WorkdayEnded":
      return `Workday ${p.workday} ended`;
    case "GameFinished":
      return `Final scores: ${p.scores.map((s, i) => `${who(i)} ${s}`).join(", ")}`;
    default:
      return null;
  }
}

function artifacts(type, p, who, name) {
  switch (type) {
    case "TableSet":
      return `Table set: museums on their ${p.museum_side} side, ${p.underwater.length} underwater cards`;
    case "DeckShuffled":
      return `Deck ${p.deck} (${p.size} cards) was shuffled`;
    case "MarketRefilled":
      return `Row ${p.deck}: ${p.cards.map(name).join(", ")}`;
    case "FirstPlayerRolled":
      return `First-player roll: ${p.seats.map((s, i) => `${who(s)} ${p.rolls[i].join("+")}`).join(", ")}`;
    case "PlayersSeated":
      return `Turn order ${list(p.order.map(who))}`;
    case "StartArranged":
      return `${who(p.seat)} arranged ${list(p.cards.map(name))}`;
    case "TurnStarted":
      return `${who(p.seat)} rolled ${p.dice.join(" ")} (round ${p.round})`;
    case "DicePlaced":
      return `${who(p.seat)} placed ${p.dice.join("+")} on ${p.card === "dive" ? "the dive" : name(p.card)}${p.card === "dive" ? "" : ` (action ${p.action})`}`;
    case "ArtifactsFound":
      return `${who(p.seat)} found ${plural(p.count, p.kind)}`;
    case "DollarsEarned":
      return `${who(p.seat)} earned $${p.amount}`;
    case "AssetBought":
      return `${who(p.seat)} bought ${name(p.card)} from row ${p.deck} for $${p.dollars}` + (p.scrolls ? ` and ${plural(p.scrolls, "scroll")}` : "");
    case "AssetUpgraded":
      return `${who(p.seat)} upgraded ${name(p.card)} for $${p.dollars}` + (p.scrolls ? ` and ${plural(p.scrolls, "scroll")}` : "");
    case "MuseumOrderFilled":
      return `${who(p.seat)} sold ${plural(p.count, p.kind)} to the ${name(p.museum)} for $${p.dollars}`;
    case "CollectorsPaid":
      return `${who(p.seat)} sold to the Private Collectors for $${p.dollars}`;
    case "UnderwaterFound":
      return `${who(p.seat)} dove and found ${titleCase(p.find)} (${p.number})`;
    case "ReputationMarked":
      return `${who(p.seat)}'s reputation is now ${p.reputation}`;
    case "EndTriggered":
      return `${who(p.seat)} reached ${p.reputation} reputation: the game ends after round ${p.round}`;
    case "TurnEnded":
      return p.next_seat === null ? `${who(p.seat)}'s turn ended` : `${who(p.next_seat)} to play`;
    case "MuseumMajority":
      return `${name(p.museum)} majority: ${p.seat === null ? "nobody" : who(p.seat) + " +" + p.reputation}`;
    case "GameFinished":
      return `Final reputation: ${p.reputation.map((s, i) => `${who(i)} ${s}`).join(", ")}`;
    default:
      return null;
  }
}

const GAMES = { sentient, prosperity, mechanica, artifacts };

function fields(p) {
  return Object.entries(p || {})
    .filter(([, v]) => v !== null && v !== false && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k.replace(/_/g, " ")} ${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(", ");
}

// `event`: a public event envelope (type "<game>.<Name>" or "lifecycle.<Name>", payload).
// `fallback` says the sentence was written from the event's fields (no sentence for its type).
export function described(event, ctx) {
  const [family, type] = event.type.split(".");
  const p = event.payload || {};
  const who = (seat) => (seat === null || seat === undefined ? "nobody" : ctx.players[seat] || `seat ${seat}`);
  let said = null;
  try {
    said = family === "lifecycle" ? lifecycle(type, p, who) : GAMES[family]?.(type, p, who, ctx.name);
  } catch {
    said = null; // a payload of another shape (a newer writer): its fields, below
  }
  if (said !== null && said !== undefined) return { text: said, fallback: false };
  return { text: `${titleCase(type.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase())}: ${fields(p)}`, fallback: true };
}

export function describe(event, ctx) {
  return described(event, ctx).text;
}

// A command (or legal action) body {type, payload} in words.
export function describeCommand(command, ctx) {
  const type = (command.type || "").split(".").pop();
  const p = command.payload || {};
  const name = ctx.name;
  switch (type) {
    case "Acquire":
      return `Acquire the card in factory slot ${p.factory_slot} into network slot ${p.network_slot}` +
        (p.assistants ? ` with ${plural(p.assistants, "assistant")}` : "") +
        (p.block_left ? ", block left" : "") + (p.block_right ? ", block right" : "");
    case "BuyTile":
      return `Buy ${name(p.tile)}${p.space ? " onto " + p.space : ""}`;
    case "Install":
      return `Buy the improvement on the ${p.price} space and install it at row ${p.row}, column ${p.col}`;
    case "Recycle":
      return `Buy the improvement on the ${p.price} space and recycle it`;
    case "UseAction":
      return `Place a ${p.die} on ${name(p.card)} (action ${p.action})`;
    case "Buy":
      return `Place a ${p.die} on ${name(p.card)} to buy ${name(p.market)}`;
    case "SellToMuseum":
      return `Place a ${p.die} to sell to the ${name(p.museum)} (box ${p.box})`;
    case "Dive":
      return `Dive with ${p.dice.join("+")}`;
    default: {
      const f = fields(p);
      return `${titleCase(type.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase())}${f ? " (" + f + ")" : ""}`;
    }
  }
}
