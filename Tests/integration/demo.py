"""Demonstration of `uplinkd check` on a gateway with four uplinks, built as a
network-namespace lab on this machine (no traffic leaves the lab):

    eth0  -> a working "internet"
    wlan0 -> a captive portal (302 redirect to its login page)
    wwan0 -> an upstream with no internet (connections refused); the gateway's
             preferred default route, which the bound probes ignore
    eth1  -> a link holding only a 169.254/16 address

First `uplinkd check` answers for each uplink; then the agent, `uplinkd run`, keeps
the verdicts, picks the primary, writes its state file and runs a hook; eth0's
carrier is cut and restored while it runs, and `uplinkd status` reads the result.

Usage (root): python3 Tests/integration/demo.py [PATH_TO_UPLINKD]
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lab as labmod  # noqa: E402

PROBES = [
    "--url", "http://203.0.113.80/generate_204", "--expect-status", "204",
    "--url", "http://203.0.113.80/hotspot-detect.html", "--expect-contains", "Success",
    "--url", "http://203.0.113.80/success.txt", "--expect-body", "success",
]


def main() -> int:
    binary = Path(sys.argv[1]) if len(sys.argv) > 1 else labmod.uplinkd_path()
    reason = labmod.unavailable_reason()
    if reason is not None:
        print(f"demo: cannot build the namespace lab: {reason}", file=sys.stderr)
        return 1
    with labmod.Lab() as lab:
        lab.serve("inet", "internet")
        lab.serve("portal", "portal-302")
        print("$ ip route show default   (inside the gateway namespace)")
        print(lab.ip("gw", "route", "show", "default").stdout, end="")
        for extra in ([], ["--json"]):
            argv = [str(binary), "check", "eth0", "wlan0", "wwan0", "eth1", "--timeout", "2", *extra, *PROBES]
            print("$ uplinkd check eth0 wlan0 wwan0 eth1 --timeout 2 " + " ".join(extra) + " --url ...")
            done = subprocess.run(lab.exec_argv("gw", argv), capture_output=True, text=True, timeout=60)
            print(done.stdout, end="")
            print(done.stderr, end="", file=sys.stderr)
            print(f"(exit status {done.returncode})\n")
        run_agent(lab, binary)
    return 0


AGENT_CONFIG = """# demo: lab probes only, fast timings
[check]
timeout = 1s
default-probes = no
[agent]
interval = 5s
suspect-interval = 200ms
hold-down = 2s
[probe a]
url = http://203.0.113.80/generate_204
[probe b]
url = http://203.0.113.80/success.txt
expect-body = success
"""

HOOK = """#!/bin/sh
echo "$UPLINK_EVENT $UPLINK_INTERFACE $UPLINK_PREVIOUS -> $UPLINK_VERDICT ($UPLINK_REASON) primary=$UPLINK_PRIMARY" >> "$(dirname "$0")/../hook.log"
"""


def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def run_agent(lab, binary):
    work = Path(tempfile.mkdtemp(prefix="uplinkd-demo-"))
    (work / "hooks.d").mkdir()
    (work / "uplinkd.conf").write_text(AGENT_CONFIG)
    hook = work / "hooks.d" / "10-log"
    hook.write_text(HOOK)
    hook.chmod(0o755)
    state = work / "state"
    print("$ uplinkd run --config uplinkd.conf --state state --hooks-dir hooks.d   (in the background)")
    agent = subprocess.Popen(lab.exec_argv("gw", [str(binary), "run", "--config", str(work / "uplinkd.conf"),
                                                   "--state", str(state), "--hooks-dir", str(work / "hooks.d")]),
                             stderr=subprocess.PIPE, text=True)
    status = lambda: subprocess.run(lab.exec_argv("gw", [str(binary), "status", "--state", str(state)]),  # noqa: E731
                                    capture_output=True, text=True).stdout
    try:
        wait_for(lambda: state.exists() and "primary eth0" in state.read_text(), 10)
        print("$ uplinkd status\n" + status())
        role, peer = lab.peer_of("eth0")
        print("-- carrier loss on eth0 (its peer set down), then back")
        lab.ip(role, "link", "set", peer, "down")
        wait_for(lambda: "eth0 ethernet down" in state.read_text(), 10)
        print("$ uplinkd status\n" + status())
        lab.ip(role, "link", "set", peer, "up")
        wait_for(lambda: "primary eth0" in state.read_text(), 15)
        # The hooks run one event at a time: let them hear eth0 is primary again before
        # the stop (a stop drops events still queued).
        hook_log = work / "hook.log"
        wait_for(lambda: hook_log.exists() and sum(line.startswith("primary ") and line.endswith("primary=eth0")
                                                   for line in hook_log.read_text().splitlines()) >= 2, 10)
        print("$ cat state\n" + state.read_text())
    finally:
        agent.terminate()
        _, log = agent.communicate(timeout=30)
    print("agent log:\n" + log)
    print("hook log:\n" + (work / "hook.log").read_text())
    print(f"(agent exit status {agent.returncode}; files in {work})")


if __name__ == "__main__":
    sys.exit(main())
