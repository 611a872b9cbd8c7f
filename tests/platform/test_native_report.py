"""The bot runner says which native modules it runs without: pip installs them only where a C
compiler is, and without them the hosted search is as correct but far weaker at its time budget."""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterator

import pytest
import structlog
from prometheus_client import REGISTRY

from dicestream.runtime import running
from services.config import Settings
from services.metrics import NATIVE
from services.native import NATIVE_MODULES, SEARCH_MODULES, missing_native, report_native
from tests.deploy.manifests import ROOT
from tests.games.compiled import why_not_built

HIDDEN = "games.prosperity.playout"


def gauge(module: str) -> float | None:
    return REGISTRY.get_sample_value("dicestream_native_module", {"module": module})


@pytest.fixture(autouse=True)
def no_gauge() -> Iterator[None]:
    # The registry is the process's: each test starts and ends without the gauge's samples.
    NATIVE.clear()
    yield
    NATIVE.clear()


def test_the_list_is_pyprojects() -> None:
    modules = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["ext-modules"]
    assert set(NATIVE_MODULES) == {m["name"] for m in modules}


def test_a_module_that_does_not_import_is_reported_with_its_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes `import` raise ImportError, as an install without a compiler would.
    monkeypatch.setitem(sys.modules, HIDDEN, None)
    with structlog.testing.capture_logs() as logs:
        missing = report_native(structlog.get_logger("test"))
    assert HIDDEN in missing and "20 times slower" in missing[HIDDEN]
    assert gauge(HIDDEN) == 0
    warned = [e for e in logs if e["event"] == "native_module_missing"]
    assert [e["module"] for e in warned] == list(missing)
    assert warned[0]["log_level"] == "warning"


@pytest.mark.parametrize("module", sorted(NATIVE_MODULES))
def test_a_built_module_is_reported_loaded(module: str) -> None:
    reason = why_not_built(module)
    if reason is not None:
        pytest.skip(reason)
    assert module not in missing_native()
    with structlog.testing.capture_logs() as logs:
        report_native(structlog.get_logger("test"))
    assert gauge(module) == 1
    assert not [e for e in logs if e.get("module") == module]


@pytest.mark.redis
@pytest.mark.standalone_only("what the bot runner reports at start does not depend on the Redis")
async def test_the_bot_runner_reports_at_start(
    settings: Settings, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert HIDDEN in SEARCH_MODULES
    monkeypatch.setitem(sys.modules, HIDDEN, None)
    assert gauge(HIDDEN) is None
    with structlog.testing.capture_logs() as logs:
        async with running(settings, redis_url, ("botrunner",)):
            pass
    # The bot runner's own logger said it (this test logs nothing itself).
    warned = [e for e in logs if e["event"] == "native_module_missing"]
    assert HIDDEN in [e["module"] for e in warned]
    assert gauge(HIDDEN) == 0
    # Only what its search uses: Sentient's core steps offline games, which it never plays.
    assert [m for m in NATIVE_MODULES if gauge(m) is not None] == list(SEARCH_MODULES)
