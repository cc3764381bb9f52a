"""Benchmark of the offline audit (issue: settle any dispute), beside a baseline measured in
the same run:

    .venv/bin/python bench/audit.py [--runs 30]

Audits the finished five-seat fixture record (`tests/fixtures/records/five-seats.json`, both
modules, as the server served it) with every receipt its players were given and the server's
keys, as `patrician audit RECORD --keys KEYS --receipt ...` does: the shape, the signature,
the chain, the seed, every append re-decided, the deal, the result and each receipt. The
baseline is what any verifier must do at the least: parse the JSON and hash the chain.
Target: under 100 ms per audit. It also says which part of the audit takes what, and that
the audit ran with no Redis client importable.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.modules["redis"] = None  # type: ignore[assignment]  # the audit must not need it
sys.modules["fakeredis"] = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evidence.audit import audit  # noqa: E402
from store import chain  # noqa: E402
from store.stored import StoredEvent  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "records"
TARGET_MS = 100.0


def _times(run: Callable[[], object], runs: int) -> list[float]:
    run()  # warm
    found = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        found.append((time.perf_counter() - start) * 1000)
    return found


def _say(name: str, times: list[float]) -> float:
    p50 = statistics.median(times)
    p95 = sorted(times)[int(0.95 * (len(times) - 1))]
    print(f"{name:<44} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  max {max(times):7.2f} ms")
    return p50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    raw = (FIXTURES / "five-seats.json").read_bytes()
    keys = (FIXTURES / "keys.json").read_bytes()
    receipts = [
        (f"receipt[{k}]", json.dumps(r).encode())
        for k, r in enumerate(json.loads((FIXTURES / "five-seats.receipts.json").read_text()))
    ]
    record = json.loads(raw)
    checks = audit(raw, receipts, keys)
    assert all(check.ok for check in checks), checks[-1]
    print(
        f"five-seat record: {len(raw) / 1024:.0f} KiB, {len(record['events'])} events, "
        f"{len(record['commands'])} appends, {len(receipts)} receipts; Redis not importable"
    )

    def baseline() -> None:
        document = json.loads(raw)
        chain.verify(
            StoredEvent(e["version"], e["data"].encode(), e["hash"]) for e in document["events"]
        )

    base = _say("baseline: parse the JSON, hash the chain", _times(baseline, runs))
    whole = _say(
        "audit, with the keys and every receipt", _times(lambda: audit(raw, receipts, keys), runs)
    )
    _say("audit, the record alone", _times(lambda: audit(raw), runs))
    print(f"ratio audit / baseline: {whole / base:.1f}x")
    met = "met" if whole < TARGET_MS else "NOT met"
    print(f"target: a five-seat audit under {TARGET_MS:.0f} ms: {met} (p50 {whole:.1f} ms)")


if __name__ == "__main__":
    main()
