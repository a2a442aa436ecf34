"""The suite's own rules, for every test pytest collects, the notebooks' nbval cells included (a plugin, loaded by
``-p tests.suite_plugin`` in pyproject's addopts; a conftest's hooks would reach the tests below it only).

Under ``CI=true`` a skipped test fails the run (a skip there hides a broken install), unless it is marked
``optional`` (a part README calls optional). With ``VOCAB_TEST_RECORD=1`` (``make test`` sets it) the run writes
``benchmarks/results/make_test.json`` from pytest's own reports: every test's node id, time and outcome, the whole
run's time and the setup's (``VOCAB_TEST_STARTED``, ``VOCAB_TEST_SETUP_SECONDS``, set by ``make test``).

``make test`` runs the suite on both cores (pytest-xdist, ``-n 2``, scheduled by :class:`_ByGroup`); each test has
a group, run whole on one worker: the real-server tests one group (one set of servers, started once), the browser
tests one, the notebooks under nbval with the tests that read or compare what they rewrite
(``figures/``, the reference run's ``analysis/``) one, and every other test file a group of its own (its module
fixtures made once), handed out longest first by the last run's record.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "results" / "make_test.json"
RECORD_READERS = ("tests/unit/test_notebook_params.py", "tests/unit/test_committed_figures.py")
_times: dict[str, dict] = {}
_started: dict[str, object] = {}


def pytest_sessionstart(session):
    from vocab.records import git_commit

    _started["commit"] = git_commit()  # before the run: nothing a test writes can make it look dirty


def group_of(nodeid: str) -> str:
    """The xdist group of a test: tests of one group run on one worker, one after another."""
    path = nodeid.split("::")[0]
    if path.startswith("tests/integration/"):
        return "servers"
    if path.startswith("tests/browser/"):
        return "browser"
    if path.startswith("notebooks/") or path in RECORD_READERS:
        return "record"
    return path


def longest_first(groups: dict[str, list[str]], record: Path = RECORD) -> list[str]:
    """The groups in the order workers take them: the longest first, by the seconds the last run's record gives
    their tests (a group it does not time goes after those it does, then the one with more tests first).

    Taken in xdist's default order (most tests first) the real-server group, the run's long pole, waited behind
    groups the other worker could have run: the last record's times put it at 2 min 50 s into the run."""
    try:
        seconds = {t["nodeid"]: t["seconds"] for t in json.loads(record.read_text())["tests"]}
    except (OSError, ValueError, KeyError, TypeError):
        seconds = {}
    timed = {g: sum(seconds.get(n, 0.0) for n in ids) for g, ids in groups.items()}
    return sorted(groups, key=lambda g: (-timed[g], -len(groups[g])))


if importlib.util.find_spec("xdist") is not None:  # `make test`'s -n 2; without xdist the suite runs on one core
    from xdist.scheduler import LoadScopeScheduling

    class _ByGroup(LoadScopeScheduling):
        """xdist's scope scheduling with :func:`group_of` as the scope: a group's tests on one worker, in order, and
        the groups handed out longest first (:func:`longest_first`)."""

        _ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self._ordered:  # the first hand-out: xdist has just filled its queue
                for g in longest_first({g: list(ids) for g, ids in self.workqueue.items()}):
                    self.workqueue.move_to_end(g)
                self._ordered = True
            super()._assign_work_unit(node)

    def pytest_xdist_make_scheduler(config, log):
        return _ByGroup(config, log)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI") == "true" and item.get_closest_marker("optional") is None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, which fails the run (a skip hides a broken install): {reason}"


def pytest_runtest_logreport(report):
    t = _times.setdefault(report.nodeid, {"nodeid": report.nodeid, "seconds": 0.0, "outcome": "passed"})
    t["seconds"] += report.duration  # setup, call and teardown
    if report.failed:
        t["outcome"] = "failed"
    elif report.skipped and t["outcome"] == "passed":
        t["outcome"] = "skipped"


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("VOCAB_TEST_RECORD") != "1" or hasattr(session.config, "workerinput"):
        return  # an xdist worker's reports reach the controller, which writes the record
    from vocab.records import machine

    started = float(os.environ.get("VOCAB_TEST_STARTED", time.time()))
    record = {
        "commit": _started.get("commit"),
        "machine": machine(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds_total": round(time.time() - started, 1),
        "setup_seconds": round(float(os.environ.get("VOCAB_TEST_SETUP_SECONDS", 0)), 1),
        "exit_status": int(exitstatus),
        "counts": {k: sum(t["outcome"] == k for t in _times.values()) for k in ("passed", "failed", "skipped")},
        "tests": sorted(_times.values(), key=lambda t: -t["seconds"]),
    }
    for t in record["tests"]:
        t["seconds"] = round(t["seconds"], 2)
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=1) + "\n")
