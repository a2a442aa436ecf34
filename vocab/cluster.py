"""A Dask cluster to run on: the one at a scheduler's address, or a local one of this machine's cores. The coverage
grid (:mod:`vocab.coverage.grid`) and a judgments table held as Parquet parts
(:mod:`vocab.imports.parts`) run their tasks on it, after its workers' packages are checked against
this process's (a number must not depend on which machine computed it)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from vocab.errors import InputError

CHECKED_PACKAGES = ("vocab", "numpy", "scipy", "pandas", "python")  # what a grid point's numbers depend on


class SchedulerError(InputError):
    """The Dask scheduler named by ``--scheduler`` could not be reached, or its workers' packages differ."""


# The workers of a local cluster share this machine's cores with the grid's tasks, and distributed's defaults are
# made for long-lived workers of a shared cluster: a statistical profiler sampling the task's thread every 10 ms, system
# and memory monitors every 0.5 s and 0.1 s, an event-loop health tick every 20 ms, and glibc told to hand freed
# memory back at 64 KiB (``MALLOC_TRIM_THRESHOLD_``, which also pins the mmap threshold at 128 KiB, so each of a
# point's large arrays is a fresh mmap). With them a task here took 5-15 % more CPU than in the process pool and its
# thread had up to 4x the page faults (it runs off the main thread, in a malloc arena of its own). So a local cluster's
# workers get these instead: no profiler, slower monitors, one malloc arena (the pool's workers' allocator), no
# trim threshold. None of it changes a number; a cluster at a --scheduler address keeps its own settings.
LOCAL_WORKER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.tick.interval": "500ms",
    "distributed.nanny.pre-spawn-environ": {
        "OMP_NUM_THREADS": 1,
        "MKL_NUM_THREADS": 1,
        "OPENBLAS_NUM_THREADS": 1,
        "MALLOC_ARENA_MAX": 1,
    },
}


def local_cluster(jobs: int):
    """A LocalCluster of ``jobs`` one-thread worker processes on 127.0.0.1, no dashboard, with
    :data:`LOCAL_WORKER_CONFIG` (each nanny keeps it for the worker it spawns, and again if it respawns one).

    A worker inherits this process's environment, into which each nanny writes its pre-spawn variables (and which
    an earlier cluster with distributed's defaults leaves ``MALLOC_TRIM_THRESHOLD_`` in): that one is held out
    while the workers start, and the environment is as it was afterwards."""
    import dask
    from dask.distributed import LocalCluster

    before = dict(os.environ)
    os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    try:
        with dask.config.set(LOCAL_WORKER_CONFIG):
            # dashboard_address=None still serves the scheduler's HTTP routes, on 8787, warning when another
            # cluster holds it: any free port instead
            return LocalCluster(
                n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0"
            )
    finally:
        os.environ.clear()
        os.environ.update(before)


def package_mismatch(found: dict, checked: tuple[str, ...] = CHECKED_PACKAGES) -> str | None:
    """What differs between this process's ``checked`` packages and the first worker's that differ, in
    ``Client.get_versions``' answer; None when every worker matches."""
    mine = _packages(found["client"])
    for address, report in sorted(found["workers"].items()):
        theirs = _packages(report)
        differ = [k for k in checked if mine.get(k) != theirs.get(k)]
        if differ:
            k = differ[0]
            return f"worker {address} has {k} {theirs.get(k)}, this process {mine.get(k)} ({len(differ)} differ)"
    return None


def _packages(report: dict) -> dict:
    """A ``get_versions`` entry's packages, with its Python version as ``python``."""
    host = dict(report.get("host", {}))
    return {**report.get("packages", {}), "python": host.get("python")}


def check_scheduler(scheduler: str | None, jobs: int | None) -> int:
    """A command's ``--scheduler`` and ``--jobs``, checked before anything runs: an address is ``tcp://`` (or
    ``local``), and ``--jobs`` (the local cluster's workers, default 2) goes with ``local`` only. Returns the jobs."""
    if scheduler is not None and scheduler != "local" and not scheduler.startswith("tcp://"):
        raise SchedulerError(
            f"--scheduler: an address such as tcp://HOST:8786 (tcp only), or local; got {scheduler[:80]!r}"
        )
    if jobs is not None and (scheduler != "local" or jobs < 1):
        raise SchedulerError(
            "--jobs: a local cluster's workers (1 or more), with --scheduler local only"
            if jobs >= 1
            else f"--jobs: at least 1 worker; got {jobs}"
        )
    return 2 if jobs is None else jobs


@contextmanager
def dask_client(scheduler: str, jobs: int, checked: tuple[str, ...] = CHECKED_PACKAGES) -> Iterator[tuple[Any, dict]]:
    """A Dask client of the cluster at ``scheduler`` (``local``: a LocalCluster of ``jobs`` one-thread worker
    processes on 127.0.0.1), and what runs the tasks: the scheduler and the ``checked`` packages every worker
    reports. A scheduler that cannot be reached, a cluster with no worker, or one whose workers' ``checked``
    packages differ from this process's is a :class:`SchedulerError` before any task is sent (distributed's own
    ``get_versions(check=True)`` only warns). The client, and a local cluster, are closed on the way out."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise SchedulerError("--scheduler needs Dask: pip install -e '.[cluster]'") from None

    # distributed logs its cluster's every step at INFO into this terminal (its own config sets the level, whatever
    # the command's), and a local scheduler a warning as each shuffle of a groupby or a sort starts and ends (its
    # bookkeeping, nothing wrong): warnings and worse only, and those shuffles' errors, unless --verbose
    verbose = logging.getLogger().getEffectiveLevel() <= logging.INFO
    quiet = {} if verbose else {"distributed": logging.WARNING, "distributed.shuffle._scheduler_plugin": logging.ERROR}
    levels = {name: logging.getLogger(name).level for name in quiet}
    for name, lv in quiet.items():
        logging.getLogger(name).setLevel(lv)
    cluster = None
    try:
        if scheduler == "local":
            cluster = local_cluster(jobs)
            client = Client(cluster)
        else:
            client = Client(scheduler, timeout=10)
    except (OSError, TimeoutError, ValueError, EOFError, MemoryError) as e:
        # MemoryError: a server that answers but is not Dask (an HTTP server, say) sends bytes distributed reads as
        # a frame length of exabytes, which numpy refuses to allocate
        if cluster is not None:
            cluster.close()
        _restore(levels)
        why = f"{type(e).__name__}: not a Dask scheduler there?" if isinstance(e, MemoryError) else str(e)[:200]
        raise SchedulerError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({why})") from None
    try:
        try:
            client.wait_for_workers(1, timeout=30)
        except TimeoutError:
            raise SchedulerError(f"--scheduler {scheduler}: the cluster has no worker after 30 s") from None
        found = client.get_versions(packages=[k for k in checked if k != "python"])
        problem = package_mismatch(found, checked)
        if problem:
            raise SchedulerError(f"--scheduler {scheduler}: {problem}")
        info = {
            "scheduler": "local Dask cluster" if cluster is not None else scheduler,
            **({"local_worker_config": LOCAL_WORKER_CONFIG} if cluster is not None else {}),
            "worker_packages": {
                a: {k: _packages(v).get(k) for k in checked} for a, v in sorted(found["workers"].items())
            },
        }
        yield client, info
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        _restore(levels)


def _restore(levels: dict[str, int]) -> None:
    for name, lv in levels.items():
        logging.getLogger(name).setLevel(lv)
