"""`python -m bench [NAME ...] [--quick] [--out DIR]`: run benchmarks, print the table, write JSON."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `bench` imports `tests.fakellm`; both live in the checkout
    sys.path.insert(0, str(REPO))

from bench.common import RESULTS_DIR, calibration_ms, machine, machine_line, table, write_results  # noqa: E402
from bench.suite import BENCHMARKS, run_benchmarks  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run paicli's benchmarks.")
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"benchmarks to run (default: all): {', '.join(BENCHMARKS)}"
    )
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes (what the smoke test runs); figures mean little"
    )
    parser.add_argument(
        "--out", type=Path, default=RESULTS_DIR, help=f"folder for the JSON results (default: {RESULTS_DIR})"
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    command = " ".join(["python -m bench", *sys.argv[1:]] if argv is None else ["python -m bench", *argv])
    info = machine()
    info["calibration_ms"] = calibration_ms(1 if args.quick else 5)
    start = time.perf_counter()
    results = run_benchmarks(args.names, quick=args.quick)
    info["suite_seconds"] = round(time.perf_counter() - start, 1)
    paths = write_results(results, info, args.out, command)
    print(f"machine: {machine_line(info)}")
    print(f"command: {command}  ({info['suite_seconds']:.0f} s)")
    print()
    print(table(results))
    missed = sum(len(result.missed) for result in results)
    print()
    print(f"{missed} target(s) missed; results in {paths[-1].parent}")
    if args.quick:
        print("(--quick runs tiny sizes to check that the benchmarks work; its figures do not test the targets)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
