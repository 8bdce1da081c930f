"""Statistics and formatting of figures for the benchmarks in Tests/bench.

Every benchmark script computes and prints its figures with these, so a median,
a p95 or a ratio means the same thing in each of them. Durations are seconds
(floats) unless a name says otherwise; an empty sample list gives None, which
the formatters print as "–".
"""

import math
import statistics
import sys
import threading

NONE = "–"


def median(xs):
    return statistics.median(xs) if xs else None


def mean(xs):
    xs = list(xs)
    return statistics.mean(xs) if xs else None


def percentile(xs, p):
    """The p-th percentile by nearest rank: the smallest sample with at least p % of
    the samples at or below it (a sample that was measured, never interpolated)."""
    if not xs:
        return None
    ordered = sorted(xs)
    return ordered[max(0, math.ceil(p * len(ordered) / 100) - 1)]


def p95(xs):
    return percentile(xs, 95)


def ms(seconds):
    return seconds * 1000.0


def fmt_s(seconds):
    """A duration for a table: 4.3 ms, 310 ms, 2.4 s, 456 s."""
    if seconds is None:
        return NONE
    if seconds < 1:
        return f"{ms(seconds):.0f} ms" if seconds >= 0.01 else f"{ms(seconds):.1f} ms"
    return f"{seconds:.1f} s" if seconds < 100 else f"{seconds:.0f} s"


def kib(n_bytes):
    return f"{n_bytes / 1024:.0f} KiB" if n_bytes is not None else NONE


def ratio(a, b):
    """a / b for a table: 1.22, 0.036 (1/28), 729."""
    if a is None or b is None or b == 0:
        return NONE
    r = a / b
    if r >= 100:
        return f"{r:.0f}"
    if r >= 0.1:
        return f"{r:.2f}"
    return f"{r:.2g} (1/{1 / r:.0f})" if r > 0 else "0"


def summary(label, samples, unit="ms", width=46):
    """One line: label, median, p95 and max of samples (seconds) in `unit` (ms or s),
    and their count."""
    scale = ms if unit == "ms" else (lambda x: x)
    return (f"  {label:<{width}} median {scale(median(samples)):9.2f} {unit}   "
            f"p95 {scale(p95(samples)):9.2f} {unit}   max {scale(max(samples)):9.2f} {unit}"
            f"   (n={len(samples)})")


class Parts:
    """What the parts of a lab benchmark gave, some of them run in threads: each
    part's value by name (`results`), or the error that stopped it (`errors`, printed
    under the table; the benchmark then exits 1)."""

    def __init__(self):
        self.results, self.errors = {}, []
        self._lock = threading.Lock()

    def attempt(self, name, fn):
        try:
            value = fn()
        except Exception as exc:                      # noqa: BLE001 -- reported under the table
            text = f"{type(exc).__name__}: {exc}"
            print(f"bench: {name} failed: {text}", file=sys.stderr)
            lines = text.splitlines()
            with self._lock:
                self.errors.append(f"{name}: " + "\n    ".join(lines[:8])
                                   + (f"\n    ... ({len(lines) - 8} more lines on stderr)" if len(lines) > 8 else ""))
            return
        with self._lock:
            self.results[name] = value
