#!/usr/bin/env python3
"""What the agent writes to its log on a gateway without a system bus: lines an hour
about the bus and ModemManager, and lines an hour in all, at the service's log level.

    sudo python3 Tests/bench/bench_quiet_log.py [--binary PATH] [--seconds S]
        [--smoke] [--command TEXT]

The binary is --binary, else $UPLINKD, else .build/release/uplinkd if it has `run`,
else .build/debug/uplinkd. Progress goes to stderr; stdout gets a header and one
Markdown table. Nothing is asserted. Exit status 1 only when the lab could not run.

Two agents run side by side for --seconds (3600), each in a failover lab of its own
(Tests/integration/failoverlab.py) at the configuration's defaults, with
DBUS_SYSTEM_BUS_ADDRESS naming a socket that does not exist (a minimal Debian
gateway, a container), no -v (the unit's log level):

  ethernet   `[uplinks] interfaces = eth0`: one ethernet uplink and no modem; the
             modem watch should never start (`modemmanager = auto`).
  cellular   the lab's three uplinks, wwan0 among them: the watch starts, finds no
             bus, and tries again with a back-off up to a minute; a condition that
             lasts is logged when it starts and at most once an hour after.

A line is "about the bus" when it names the system bus, D-Bus or ModemManager.

--smoke: 20 s.
"""

import argparse
import re
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import failoverlab  # noqa: E402
from agentrun import AgentRun  # noqa: E402
from bench_compare import parse_bench_args  # noqa: E402
from bench_failover import lab_bench_header, progress  # noqa: E402
from failoverlab import FailoverLab  # noqa: E402

SMOKE = {"seconds": 20}
FULL = {"seconds": 3600}
ABOUT_THE_BUS = re.compile(r"system bus|d-bus|dbus|modemmanager", re.I)
SETUPS = (
    ("ethernet", {"uplinks": {"interfaces": "eth0"}}),
    ("cellular", {}),
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to measure")
    ap.add_argument("--seconds", type=float, help="how long each agent runs (3600)")
    args = parse_bench_args(ap, "--smoke", "20 s", SMOKE, FULL)
    found = lab_bench_header(args, "# uplinkd: log lines without a system bus", "20 s",
                             config="the failover lab's defaults; no system bus; no -v")
    if found is None:
        return 1
    binary, header = found
    with tempfile.TemporaryDirectory(prefix="bench-quiet-log.") as tmp, ExitStack() as stack:
        work = Path(tmp)
        runs = []
        for name, sections in SETUPS:
            lb = stack.enter_context(FailoverLab())
            config = lb.agent_config(sections=sections)
            run = AgentRun(lb, work / name, config, hooks=lb.agent_hooks(), binary=binary, verbose=0,
                           env={"DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={work}/no-such-bus"})
            runs.append((name, run))
        for name, run in runs:
            run.start()
            stack.callback(run.stop)
        started = time.monotonic()
        progress(f"both agents running; {args.seconds:.0f} s")
        time.sleep(args.seconds)
        elapsed = time.monotonic() - started
        rows = []
        for name, run in runs:
            lines = run.stderr().splitlines()
            bus = [line for line in lines if ABOUT_THE_BUS.search(line)]
            rows.append((name, len(bus), len(lines), bus))
    print("\n".join(header))
    print(f"- each agent ran {elapsed:.0f} s\n")
    print("| setup | lines about the bus | lines an hour about the bus | lines in all | lines an hour in all |")
    print("|-------|--------------------:|----------------------------:|-------------:|---------------------:|")
    for name, bus, total, _ in rows:
        print(f"| {name} | {bus} | {bus * 3600 / elapsed:.1f} | {total} | {total * 3600 / elapsed:.1f} |")
    for name, _, _, bus in rows:
        print(f"\n{name}: the lines about the bus:")
        print("\n".join(f"    {line}" for line in bus) or "    (none)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
