"""The same interface in process memory: for unit tests only (no durability, no sharing)."""

from __future__ import annotations

from contracts.bus import notice_fields
from services.eventstore.base import CONFLICT, DUPLICATE, OK, SKIPPED, AppendRequest, AppendResult


class MemoryEventStore:
    def __init__(self) -> None:
        self.logs: dict[str, list[bytes]] = {}
        self.public: dict[str, list[tuple[str, bytes]]] = {}  # (entry id, data), as on Redis
        self.outcomes: dict[str, dict[str, bytes]] = {}
        self.audits: dict[str, list[bytes]] = {}
        # What requests' effects and acks would have written (standalone Redis does it in-script).
        self.streams: dict[str, list[bytes]] = {}
        self.notices: dict[str, list[dict[str, bytes | str]]] = {}  # bus stream -> entries' fields
        self.acked: list[bytes] = []

    async def append_many(self, requests: list[AppendRequest]) -> list[AppendResult]:
        out: list[AppendResult] = []
        broken: str | None = None
        for i, r in enumerate(requests):
            chained = i > 0 and requests[i - 1].game_id == r.game_id
            if chained and broken == r.game_id:
                out.append(AppendResult(status=SKIPPED))
                continue
            result = self._append(r)
            broken = r.game_id if result.status != OK else None
            out.append(result)
        return out

    def _append(self, r: AppendRequest) -> AppendResult:
        seen = self.outcomes.setdefault(r.game_id, {})
        if r.command_id in seen:
            return AppendResult(status=DUPLICATE, prior_outcome=seen[r.command_id])
        log = self.logs.setdefault(r.game_id, [])
        if len(log) != r.expected_version:
            return AppendResult(status=CONFLICT, version=len(log))
        log.extend(r.events)
        pub = self.public.setdefault(r.game_id, [])
        pub.extend((f"{r.expected_version + i + 1}-0", p) for i, p in enumerate(r.public) if p is not None)
        if r.public_rejection is not None:
            # Rejections do not move the version: they take sequence numbers after its event.
            at, seq = (int(n) for n in pub[-1][0].split("-")) if pub else (0, 0)
            pub.append((f"{len(log)}-{seq + 1 if at == len(log) else 1}", r.public_rejection))
        if r.remember:
            seen[r.command_id] = r.outcome
        self.audits.setdefault(r.game_id, []).append(r.outcome)
        if r.notice is not None:
            self.streams.setdefault(r.notice[0], []).append(r.notice[1])
            # The whole entry, as the script writes it (contracts.bus.notice_fields).
            self.notices.setdefault(r.notice[0], []).append(notice_fields(r.notice[1], r.expected_version, r.events))
        for stream, data in r.effects:
            self.streams.setdefault(stream, []).append(data)
        if r.ack is not None:
            self.acked.append(r.ack[2])
        return AppendResult(status=OK, version=len(log))

    async def read(self, game_id: str, after: int = 0) -> list[tuple[int, bytes]]:
        return [(i + 1, e) for i, e in enumerate(self.logs.get(game_id, [])) if i + 1 > after]

    async def read_many(self, after: dict[str, int]) -> dict[str, list[tuple[int, bytes]]]:
        return {gid: await self.read(gid, v) for gid, v in after.items()}

    async def read_public(self, game_id: str) -> list[tuple[str, bytes]]:
        return list(self.public.get(game_id, []))

    async def audit(self, game_id: str) -> list[bytes]:
        return list(self.audits.get(game_id, []))

    async def outcome(self, game_id: str, command_id: str) -> bytes | None:
        return self.outcomes.get(game_id, {}).get(command_id)
