"""Run every ``bench/bench_*.py`` script in turn and print their tables (``make bench``).

Each script runs in its own Python process (so thread settings and memory do not leak from
one to the next); its tables are printed as they come. The profiler's own status lines on
stderr are dropped; any other stderr output is shown. Exits non-zero if a script fails.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    failed = []
    for script in scripts:
        print(f"\n=== {script.name} ===", flush=True)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, str(script)],
            cwd=HERE,
            stdout=None,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        noise = ("USDT:", "STAGE:")
        for line in proc.stderr.splitlines():
            if not line.startswith(noise):
                print(line, file=sys.stderr)
        print(f"({script.name}: {time.perf_counter() - start:.0f} s)", flush=True)
        if proc.returncode:
            failed.append(script.name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
