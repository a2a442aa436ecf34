"""The coverage grid on Dask: a local two-worker cluster on 127.0.0.1 gives the process pool's frame, both workers
run tasks, and a worker SIGKILLed while it holds tasks changes nothing (the scheduler reruns them elsewhere)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import dask.distributed  # noqa: F401 - make setup installs it: a broken install fails here, never skips
import pandas as pd
import pytest

from vocab.coverage import GridSpec, run_grid

SPEC = GridSpec(("seed", "fiducial"), (10,), (0.2, 0.4, 0.6, 0.8), (0.8, 0.95), (0.8,), (2.0,), levels=40, sims=150,
                n_boot=100)  # fmt: skip


@pytest.fixture(scope="module")
def pooled(tmp_path_factory) -> pd.DataFrame:
    return pd.read_csv(run_grid(SPEC, tmp_path_factory.mktemp("pool") / "g.csv", jobs=2))


def test_a_local_dask_cluster_gives_the_pools_frame(pooled, tmp_path):
    out = run_grid(SPEC, tmp_path / "g.csv", jobs=2, scheduler="local")
    pd.testing.assert_frame_equal(pooled, pd.read_csv(out))
    ran = json.loads(out.with_suffix(".json").read_text())["ran_on"]
    assert ran["scheduler"] == "local Dask cluster" and len(ran["worker_packages"]) == 2
    assert ran["local_worker_config"]["distributed.worker.profile.enabled"] is False  # recorded with the grid
    assert len(ran["tasks_by_worker"]) == 2 and sum(ran["tasks_by_worker"].values()) == 8
    assert all(n >= 1 for n in ran["tasks_by_worker"].values())  # both workers ran tasks
    assert all(p["vocab"] and p["scipy"] for p in ran["worker_packages"].values())


def test_a_local_clusters_workers_run_without_the_shared_cluster_defaults(monkeypatch):
    """What LOCAL_WORKER_CONFIG says reaches the worker processes: one malloc arena and no trim threshold in their
    environment (set before they start; here the caller's environment has the trim threshold an earlier default
    cluster leaves in it), no statistical profiler in their Dask config; the caller's environment is as it was."""
    import dask
    from dask.distributed import Client

    from vocab.cluster import local_cluster

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    before = dict(os.environ)

    def settings():
        env = os.environ
        return (
            env.get("MALLOC_ARENA_MAX"),
            env.get("MALLOC_TRIM_THRESHOLD_"),
            dask.config.get("distributed.worker.profile.enabled"),
        )

    with local_cluster(2) as cluster, Client(cluster) as client:
        seen = client.run(settings)
        assert dict(os.environ) == before
    assert len(seen) == 2 and set(seen.values()) == {("1", None, False)}
    assert dask.config.get("distributed.worker.profile.enabled") is True  # this process's config is left as it was


def test_a_worker_with_other_packages_is_named():
    from vocab.cluster import package_mismatch

    me = {"packages": {"vocab": "0.1.0", "numpy": "2.3.5", "scipy": "1.16", "pandas": "3.1.1"},
          "host": {"python": "3.11.7.final.0"}}  # fmt: skip
    other = {"packages": {**me["packages"], "scipy": "1.15"}, "host": me["host"]}
    assert package_mismatch({"client": me, "workers": {"tcp://a:1": me}}) is None
    found = package_mismatch({"client": me, "workers": {"tcp://a:1": me, "tcp://b:2": other}})
    assert found == "worker tcp://b:2 has scipy 1.15, this process 1.16 (1 differ)"


def test_a_worker_killed_mid_run_changes_nothing(pooled, tmp_path):
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:  # fmt: skip
        pids = client.run(os.getpid)  # worker address -> pid
        done: dict = {}
        runner = threading.Thread(
            target=lambda: done.update(
                out=run_grid(SPEC, tmp_path / "g.csv", jobs=2, scheduler=cluster.scheduler_address)
            )
        )
        runner.start()
        victim = None
        deadline = time.monotonic() + 120
        while victim is None and time.monotonic() < deadline:
            busy = {w: keys for w, keys in client.processing().items() if keys}
            finished = sum(1 for s in client.run_on_scheduler(_states).values() if s == "memory")
            if len(busy) == 2 and finished >= 1:  # tasks done and tasks running on both: kill one mid-task
                victim = sorted(busy)[0]
                os.kill(pids[victim], signal.SIGKILL)
            time.sleep(0.05)
        runner.join(timeout=300)
        assert victim is not None, "the run ended before both workers held tasks"
        assert "out" in done, "the run did not finish after a worker was lost"
    pd.testing.assert_frame_equal(pooled, pd.read_csv(done["out"]))


def _states(dask_scheduler=None) -> dict:
    return {k: ts.state for k, ts in dask_scheduler.tasks.items() if str(k).startswith("grid_point")}
