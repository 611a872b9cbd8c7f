"""Types of games/artifacts/playout.pyx (the compiled module carries none)."""

from typing import Any

from games.artifacts.components import ArtifactsData

class NotNative(ValueError): ...

class Tables:
    def __init__(self, data: ArtifactsData) -> None: ...

def playout(tables: Tables, match: Any) -> tuple[list[int], int, list[int], list[int]] | None: ...
