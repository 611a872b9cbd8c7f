"""What a seat or a spectator sees of each game: one msgspec struct per game (`<Game>View`),
tagged by `game`, so that `view` in a TurnRequest decodes as the union of every game's view.

`schema/views/<game>.json` publishes each, and `schema/protocol/turn-request.<game>.json` the
TurnRequest with that game's view (docs/bots.md)."""
