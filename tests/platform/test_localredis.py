"""dicestream.localredis: `stop --dir` returns only once the servers it stops have exited, so the
folder can be removed right after (.ci/run's clean-up)."""

from __future__ import annotations

import shutil
from pathlib import Path

from dicestream.localredis import LocalRedis, free_ports, stop_folder


def test_stop_waits_until_the_servers_have_exited_and_their_folder_can_go(tmp_path: Path) -> None:
    folder = tmp_path / "servers"
    servers = [LocalRedis(free_ports(1), folder / str(k), "--appendonly", "yes").start() for k in range(2)]
    for server in servers:
        server.client().set("k", "v" * 100_000)  # something to write on the way down
    stop_folder(folder)
    for server in servers:
        assert server.proc is not None
        # Reaped here, since this process started them: stop_folder saw each one exit.
        assert server.proc.poll() is not None, f"redis-server on port {server.port} still running"
    assert not list(folder.glob("**/pid"))
    shutil.rmtree(folder)
