"""dicestream: an event-sourced referee for board games over Redis Streams."""
