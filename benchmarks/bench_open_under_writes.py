"""False "damaged" refusals while other processes write the store: the open-time check, 10^6 times.

Writer processes store records with vectors through the store's write path (each checkpoint grows
``memory.db`` by megabytes) while checker processes run the open-time check
(:func:`~mission_memory.stores.sqlite_integrity.check_file_shape`) in a loop and open a whole
``SqliteStore`` every ``--open-every``-th time. The store is healthy throughout, so every refusal is
false. The harness is the CI test's (``tests/security/open_under_writes.py``), run longer.

Run: ``python benchmarks/bench_open_under_writes.py --checks 1000000`` (add ``PYTHONPATH=<a checkout>/src``
to measure another version of the package). Prints the counts and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.security.open_under_writes import run_opens_beside_writers  # noqa: E402


def main() -> None:
    """Parse the options, run, print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checks", type=int, default=1_000_000, help="open-time checks in all")
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--checkers", type=int, default=2)
    parser.add_argument("--open-every", type=int, default=0,
                        help="a whole store open every N-th check (0: never; its quick_check of a large store holds"
                        " a read transaction that keeps SQLite from resetting -wal, which then grows)")
    parser.add_argument("--dim", type=int, default=256, help="vector dimension (bytes written per record / 4)")
    parser.add_argument("--max-records", type=int, default=400_000, help="per writer, a bound on the file's growth")
    args = parser.parse_args()
    import mission_memory

    with tempfile.TemporaryDirectory(prefix="bench-open-") as folder:
        started = time.time()
        tally = run_opens_beside_writers(
            Path(folder) / "memory.db", writers=args.writers, checkers=args.checkers, records_each=args.max_records,
            open_every=args.open_every, checks_each=-(-args.checks // args.checkers), dim=args.dim)
        size = (Path(folder) / "memory.db").stat().st_size
    print(json.dumps({
        "package": str(Path(mission_memory.__file__).parent), "checks": tally.checks, "whole_opens": tally.opens,
        "false_refusals": tally.refusals, "checks_to_first_refusal": tally.checks_to_first_refusal,
        "records_written": tally.records_written, "final_store_mb": round(size / 2**20, 1),
        "checker_seconds": round(tally.seconds, 1), "wall_seconds": round(time.time() - started, 1),
        "load_1m": os.getloadavg()[0], "first_refusal": tally.first_refusal[:200],
    }))


if __name__ == "__main__":
    main()
