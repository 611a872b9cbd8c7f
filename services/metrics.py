"""Prometheus metrics of every service (prometheus-client's default registry, served at /metrics).

Labels stay bounded: game types, shards (DICESTREAM_SHARDS of them), service and loop names.
Hot paths count per batch, not per command.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

COMMANDS = Counter(
    "dicestream_commands_total",
    "Intake entries the referee finished with, by game type and outcome (accepted, refused, dead_lettered).",
    ["game_type", "outcome"],
)
BATCH_SIZE = Histogram(
    "dicestream_batch_entries",
    "Stream entries per handled batch (a referee's commands, a projector's or turn service's bus notices).",
    ["role"],
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048),
)
BATCH_SECONDS = Histogram(
    "dicestream_batch_seconds",
    "Time to handle one batch (for a referee: judge, append, answer and ack it).",
    ["role"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
LAG = Gauge(
    "dicestream_stream_lag_entries",
    "Entries of a shard's stream not yet delivered to the role's consumer group (Redis 7 XINFO GROUPS lag).",
    ["role", "shard"],
)
PENDING = Gauge(
    "dicestream_stream_pending_entries",
    "Entries of a shard's stream delivered to the role's group and not acknowledged yet.",
    ["role", "shard"],
)
LEASES = Gauge("dicestream_leases_held", "Shard leases this process holds.", ["role"])
LEASE_CHANGES = Counter(
    "dicestream_lease_changes_total", "Shard leases acquired, released or lost.", ["role", "change"]
)
LOOP_UP = Gauge("dicestream_loop_up", "1 while a supervised loop runs, 0 while it is down.", ["service", "loop"])
RESTARTS = Counter(
    "dicestream_supervisor_restarts_total", "Restarts of a supervised loop after a failure.", ["service", "loop"]
)
DEAD_LETTERS = Gauge("dicestream_dead_letters", "Entries in the dead-letter stream.")
TRIMMED = Counter(
    "dicestream_trimmed_entries_total",
    "Stream entries trimmed once every consumer group was done with them.",
    ["stream"],
)
TRIM_FAILURES = Counter("dicestream_trim_failures_total", "Streams that could not be trimmed (logged).", ["stream"])
CLIENTS = Gauge("dicestream_clients_registered", "Trusted clients whose own intakes the referee reads.")
NATIVE = Gauge(
    "dicestream_native_module",
    "1 when a native module (compiled at install) is loaded, 0 when its Python fallback runs instead.",
    ["module"],
)
