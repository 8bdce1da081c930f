"""Demonstration of `uplinkd check` on a gateway with three uplinks, built as a
network-namespace lab on this machine (no traffic leaves the lab):

    eth0  -> a working "internet"
    wlan0 -> a captive portal (302 redirect to its login page)
    wwan0 -> an upstream with no internet (connections refused); the gateway's
             preferred default route, which the bound probes ignore
    eth1  -> a link holding only a 169.254/16 address

Usage (root): python3 Tests/integration/demo.py [PATH_TO_UPLINKD]
"""

import subprocess
import sys
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
