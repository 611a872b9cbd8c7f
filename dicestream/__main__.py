"""`python -m dicestream`: the same as the `dicestream` command."""

from dicestream.cli import app

app(prog_name="dicestream")
