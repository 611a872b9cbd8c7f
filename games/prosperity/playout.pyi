"""Types of games/prosperity/playout.pyx (the compiled module carries none)."""

from games.prosperity.components import ProsperityData
from games.prosperity.state import ProsperityState

class NotNative(ValueError): ...

class Tables:
    def __init__(self, data: ProsperityData) -> None: ...

def playout(tables: Tables, state: ProsperityState) -> tuple[list[int], int, list[int], list[int]] | None: ...
