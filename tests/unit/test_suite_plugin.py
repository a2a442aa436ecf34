"""The suite's scheduling (tests/suite_plugin.py): which worker group a test belongs to, and the order groups are
handed to xdist's workers in."""

from __future__ import annotations

import json

from tests.suite_plugin import group_of, longest_first


def test_a_tests_group_keeps_servers_browser_and_record_readers_together():
    assert group_of("tests/integration/test_loop_real.py::test_x") == "servers"
    assert group_of("tests/browser/test_page_browser.py::test_y") == "browser"
    assert group_of("notebooks/08_coverage.ipynb::Cell 3") == "record"
    assert group_of("tests/unit/test_committed_figures.py::test_z[a]") == "record"
    assert group_of("tests/unit/test_parts.py::test_w") == "tests/unit/test_parts.py"


def test_groups_go_longest_first_by_the_records_times_then_untimed_by_count(tmp_path):
    record = tmp_path / "make_test.json"
    # servers 2 + 7 = 9 s, a.py 4 s, b.py 5 s; c.py (3 tests) and d.py (1 test) are not in the record
    times = {"i/1": 2.0, "i/2": 7.0, "a/1": 1.5, "a/2": 2.5, "b/1": 5.0}
    record.write_text(json.dumps({"tests": [{"nodeid": n, "seconds": s} for n, s in times.items()]}))
    groups = {"a.py": ["a/1", "a/2"], "c.py": ["c/1", "c/2", "c/3"], "servers": ["i/1", "i/2"], "d.py": ["d/1"],
              "b.py": ["b/1"]}  # fmt: skip
    assert longest_first(groups, record) == ["servers", "b.py", "a.py", "c.py", "d.py"]
    # without a record (or an unreadable one), xdist's own order: the group with more tests first, ties as given
    assert longest_first(groups, tmp_path / "none.json") == ["c.py", "a.py", "servers", "d.py", "b.py"]
    record.write_text("{")
    assert longest_first(groups, record)[0] == "c.py"
