"""What the data-plan tests (test_plans.py) and benchmark (Tests/bench/bench_plans.py)
share, on top of the failover lab (failoverlab.py):

- device_counters(lb, iface) / ip_bytes(c): the kernel's 64-bit link statistics of
  a gw interface (`ip -s -j link`), and the IP bytes they mean (less the 14-byte
  Ethernet header of each packet on the lab's veths: what the agent counts);
- wire_bytes(lb, iface): the nftables counters of the lab (IPv4, at the IP level:
  the gateway's own traffic and the forwarded LAN traffic, both ways);
- plan_file(path): the agent's plan file, {iface: (cycle start, received, sent)};
- recreate(lb, iface): the uplink's veth deleted and created again (a modem that
  re-enumerates: a new device, a new index, counters from zero), addresses and
  default route as the lab made them;
- TcpFlows: tcpflow.py servers in every upstream and long-lived clients in the LAN;
- Bulk: repeated 1 MB downloads from the LAN (curl), the bulk of "mixed" traffic.
"""

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from failoverlab import NAT_TABLE, log_fields
from lab import INTERNET_ADDR, LabError, tool

HERE = Path(__file__).resolve().parent
TCPFLOW = HERE / "tcpflow.py"
ETHERNET_HEADER = 14


def device_counters(lb, iface: str) -> dict:
    """{rx_bytes, tx_bytes, rx_packets, tx_packets} of a gw interface."""
    link = json.loads(lb.ip("gw", "-s", "-j", "link", "show", "dev", iface).stdout)[0]
    stats = link["stats64"]
    return {"rx_bytes": stats["rx"]["bytes"], "tx_bytes": stats["tx"]["bytes"],
            "rx_packets": stats["rx"]["packets"], "tx_packets": stats["tx"]["packets"]}


def ip_bytes(c: dict) -> int:
    """IP bytes both ways of device counters (the lab's uplinks are veths)."""
    return (c["rx_bytes"] - ETHERNET_HEADER * c["rx_packets"]) + (c["tx_bytes"] - ETHERNET_HEADER * c["tx_packets"])


def wire_bytes(lb, iface: str) -> int:
    c = lb.counters()[iface]
    return sum(c[k][1] for k in ("local_in", "local_out", "fwd_in", "fwd_out"))


def plan_file(path: Path) -> dict:
    """{iface: (cycle_start, received, sent)} of the agent's plan file."""
    plans = {}
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if len(f) >= 5 and f[0] == "plan":
            plans[f[1]] = (int(f[2]), int(f[3]), int(f[4]))
    return plans


def plan_used(path: Path, iface: str) -> int:
    _start, received, sent = plan_file(path)[iface]
    return received + sent


def recreate(lb, iface: str):
    """Deletes the uplink's veth (both ends) and makes it again as the lab did:
    a new device with a new index, its counters from zero."""
    u = lb.uplink(iface)
    lb.ip("gw", "link", "del", iface)
    lb._add_veth(u)
    lb.ip(u.role, "addr", "add", f"{u.router}/24", "dev", u.peer)
    lb.ip(u.role, "link", "set", u.peer, "up")
    lb.ip("gw", "addr", "add", f"{u.address}/24", "dev", iface)
    lb.ip("gw", "link", "set", iface, "up")
    lb.wait_lower_up(iface, True)
    lb.ip("gw", "-4", "route", "add", "default", "via", u.router, "dev", iface, "metric", str(u.metric))


def quiet_link(lb, iface: str):
    """Nothing on an uplink's wire but what a test sends: no IPv6 (router and
    multicast listener messages) and permanent neighbour entries both ends (no ARP),
    so its counters can be compared byte for byte with an agent's readings taken at
    other moments. Again after the device is created anew."""
    u = lb.uplink(iface)
    mac = {}
    for role, dev in (("gw", iface), (u.role, u.peer)):
        subprocess.run(lb.exec_argv(role, ["sysctl", "-q", "-w", f"net.ipv6.conf.{dev}.disable_ipv6=1"]),
                       check=True, timeout=10)
        mac[role] = json.loads(lb.ip(role, "-j", "link", "show", "dev", dev).stdout)[0]["address"]
    lb.ip("gw", "neigh", "replace", u.router, "lladdr", mac[u.role], "dev", iface, "nud", "permanent")
    lb.ip(u.role, "neigh", "replace", u.address, "lladdr", mac["gw"], "dev", u.peer, "nud", "permanent")


def fetch(lb, role: str, size: int, iface=None, timeout: float = 20.0) -> int:
    """One GET of `size` bytes of /lan/ from `role` (bound to `iface` if given):
    the body's length (curl's size_download)."""
    argv = [tool("curl"), "-s", "-o", "/dev/null", "-w", "%{size_download}", "--max-time", str(timeout),
            f"http://{INTERNET_ADDR}/lan/bulk?size={size}"]
    if iface:
        argv[1:1] = ["--interface", iface]
    done = subprocess.run(lb.exec_argv(role, argv), capture_output=True, text=True, timeout=timeout + 10)
    return int(done.stdout or 0)


class Bulk:
    """Downloads of `size` bytes from the LAN, one after the other, until stopped."""

    def __init__(self, lb, size: int = 1 << 20, pause: float = 0.2):
        self.lb, self.size, self.pause = lb, size, pause
        self.received = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.received += fetch(self.lb, "lan", self.size)
            except (subprocess.SubprocessError, ValueError):
                pass
            self._stop.wait(self.pause)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=30)


class TcpFlows:
    """tcpflow.py servers on 203.0.113.80:5002 in every upstream of the lab, and
    clients in the LAN, each keeping one connection open (see tcpflow.py)."""

    def __init__(self, lb):
        self.lb = lb
        self.logs = lb.dir / "logs"
        for u in lb.uplinks:
            lb.procs.start_ready(f"tcpflow-{u.iface}", u.role,
                                 [sys.executable, str(TCPFLOW), "serve", "--role", u.role,
                                  "--log", str(self.logs / f"tcpflow-{u.iface}.log")])
        self.clients = {}

    def client(self, name: str = "flow", period: float = 0.1, payload: int = 64, timeout: float = 1.0):
        log = self.logs / f"tcpflow-client-{name}.log"
        proc = self.lb.procs.start_ready(
            f"tcpflow-client-{name}", "lan",
            [sys.executable, str(TCPFLOW), "client", "--log", str(log), "--period", str(period),
             "--payload", str(payload), "--timeout", str(timeout)])
        self.clients[name] = proc
        return proc

    def stop_client(self, name: str = "flow"):
        self.lb.procs.stop(self.clients.pop(name))

    def events(self, name: str = "flow"):
        """[(time, connection, event, upstream)] of a client, oldest first."""
        return [(float(f[0]), int(f[1]), f[2], f[3]) for f in log_fields(self.logs / f"tcpflow-client-{name}.log", 4)]

    def wait(self, predicate, timeout: float, what: str, name: str = "flow"):
        deadline = time.monotonic() + timeout
        while True:
            events = self.events(name)
            found = predicate(events)
            if found:
                return found
            if time.monotonic() >= deadline:
                raise LabError(f"{what}: not within {timeout}s; last events: {events[-12:]}")
            time.sleep(0.05)


def validate_sources(lb, iface: str):
    """The upstream of `iface` drops what arrives from the gateway with a source
    address not its own (source-address validation, BCP 38, as ISPs filter): a
    connection NATed to another uplink's address whose packets the gateway now
    routes out of `iface` is neither carried nor answered with a reset, as on the
    real internet, where each uplink is a different provider."""
    u = lb.uplink(iface)
    subnet = u.router.rsplit(".", 1)[0] + ".0/24"
    rules = (f"table ip plans_bcp38 {{\n  chain prerouting {{ type filter hook prerouting priority -300; policy accept;\n"
             f"    iifname \"{u.peer}\" ip saddr != {subnet} drop\n  }}\n}}\n")
    subprocess.run(lb.exec_argv(u.role, [tool("nft"), "-f", "-"]), input=rules, text=True, check=True, timeout=10)


def snat_to_fixed_addresses(lb):
    """The gateway's NAT as static SNAT to each uplink's address instead of
    masquerade. Linux drops a masqueraded connection whose packets would leave
    through another interface than the one it was NATed on (the next packet meets a
    new entry), so behind masquerade a failback moves every flow by itself; with
    SNAT (as many gateways configure it for static addresses) the entry stays, and
    the flow's packets keep the backup's address after the failback."""
    rules = [f"flush chain ip {NAT_TABLE} postrouting"]
    rules += [f"add rule ip {NAT_TABLE} postrouting oifname \"{u.iface}\" snat to {u.address}" for u in lb.uplinks]
    subprocess.run(lb.exec_argv("gw", [tool("nft"), "-f", "-"]), input="\n".join(rules) + "\n", text=True,
                   check=True, timeout=10)
