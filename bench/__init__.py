"""`dicestream bench`: the referee measured against raw Redis baselines (see bench/README.md)."""
