"""`python -m dicestream`: the same as the `dicestream` command."""

from dicestream.cli import app

if __name__ == "__main__":
    app(prog_name="dicestream")
