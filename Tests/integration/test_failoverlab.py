"""Self-tests of the failover lab (failoverlab.py; no uplinkd needed), so that a
broken lab is not mistaken for an uplinkd bug: the five built-in probe endpoints
answer like the real ones through each uplink (curl --interface, names resolved
through that uplink's own DNS server), DNS answers only the probe names, LAN
traffic is forwarded and NATed out of the gateway's preferred route, the shipped
route-failover hook (run by hand as the agent would) moves it through its rules
and table 7077, a cut stops it with the carrier up while DNS keeps
answering, the nftables counters count what they should, a DHCP uplink's
lease carries the hotspot's "ANDROID_METERED" option, the delay relay makes a
slow path (IPv4 and IPv6, carrier loss still reaching the gateway), the
bursty upload is answered in bursts, and the TCP flows to the cloud
(FailoverLab(cloud=True, upstream_nat=True, lan_hosts=N)): the flow server names
the upstream that carried each connection and sees only the upstreams' NAT
addresses, long-lived clients (from a second LAN host, paused and resumed) and
bursts of short connections work, a flow moved to another uplink by hand (today's
route failover without pinning) is reset and its client's next connection takes
the new uplink, upstream NAT ends a moved flow that static SNAT in the gateway
would keep, and reload_firewall() keeps the LAN's NAT and its connections."""

import shutil
import subprocess
import time

import pytest

import failoverlab
from failoverlab import (BUILTIN, CLOUD_ADDR, DNS_TTL, FAILOVER_UPLINKS, LAN_GW, LAN_HOST, LAN_HOST2,
                         LAN_IFACE_GW, LAN_IFACE_HOST, METERED_OPTION, NAT_TABLE, ROUTE_PROTOCOL,
                         ROUTE_TABLE, RULE_PRIORITY, UPSTREAM_NAT_TABLE, FailoverLab, FlowClients,
                         rules_as_contracted)
from inetserver import ENDPOINTS
from lab import INTERNET_ADDR, run
from plansupport import snat_to_fixed_addresses
from pytesthelp import skip_or_fail

IFACES = [u.iface for u in FAILOVER_UPLINKS]


def need_curl():
    if shutil.which("curl") is None:
        skip_or_fail("curl is not installed (apt-get install -y curl)", "curl")


def curl(lb, iface, host, path, max_time=3):
    """(exit code, status, {header: value}, body) of one request from gw bound
    to iface, `host` pinned to the lab internet address."""
    argv = ["curl", "-s", "-i", "--max-time", str(max_time), "--interface", iface,
            "--resolve", f"{host}:80:{INTERNET_ADDR}", f"http://{host}{path}"]
    p = subprocess.run(lb.exec_argv("gw", argv), capture_output=True, timeout=30)
    head, _, body = p.stdout.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split(" ")[1] if lines and " " in lines[0] else ""
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip()] = v.strip()
    return p.returncode, status, headers, body


def test_topology(flab):
    for u in FAILOVER_UPLINKS:
        addrs = [a["local"] for a in flab.addresses(u.iface) if a["family"] == "inet"]
        assert addrs == [u.address], (u.iface, addrs)
        assert flab.has_lower_up(u.iface)
    routes = flab.ip("gw", "-4", "route", "show", "default").stdout
    for u in FAILOVER_UPLINKS:
        assert f"default via {u.router} dev {u.iface} metric {u.metric}" in routes, routes
    assert flab.route_dev("gw") == "eth0", "the kernel's own order prefers eth0"
    lan = flab.ip("lan", "-4", "route", "show", "default").stdout
    assert f"default via {LAN_GW}" in lan
    fwd = subprocess.run(flab.exec_argv("gw", ["sysctl", "-n", "net.ipv4.ip_forward"]),
                         capture_output=True, text=True).stdout.strip()
    assert fwd == "1"
    # The upstreams do not forward: nothing can leave the lab through them.
    for u in FAILOVER_UPLINKS:
        up = subprocess.run(flab.exec_argv(u.role, ["sysctl", "-n", "net.ipv4.ip_forward"]),
                            capture_output=True, text=True).stdout.strip()
        assert up == "0", u.role


@pytest.mark.parametrize("iface", IFACES)
def test_dns_answers_probe_names_only(flab, iface):
    for host, _path in BUILTIN.values():
        got = flab.dns_query(iface, host)
        assert got == {"rcode": 0, "answers": [INTERNET_ADDR], "ttls": [DNS_TTL]}, (host, got)
        six = flab.dns_query(iface, host, "AAAA")
        assert six.get("rcode") == 0 and six.get("answers") == [], (host, six)
    other = flab.dns_query(iface, "example.com")
    assert other.get("rcode") == 3 and other.get("answers") == [], other
    asked = flab.dns_queries(iface)
    assert ("A", BUILTIN["apple"][0]) in asked and ("A", "example.com") in asked


@pytest.mark.parametrize("iface", IFACES)
def test_builtin_endpoints_answer_like_the_real_ones(flab, iface):
    need_curl()
    u = flab.uplink(iface)
    for name, (host, path, status, headers, body) in ENDPOINTS.items():
        rc, got_status, got_headers, got_body = curl(flab, iface, host, path)
        assert rc == 0, (name, rc)
        assert got_status == status.split()[0], (name, got_status)
        assert got_body == body, (name, got_body)
        assert list(got_headers) == [k for k, _v in headers], (name, got_headers)
        if "Content-Length" in got_headers:
            assert int(got_headers["Content-Length"]) == len(body)
    # The same paths by another host name, or other paths: not found.
    rc, got_status, _h, _b = curl(flab, iface, "captive.apple.com", "/generate_204")
    assert (rc, got_status) == (0, "404")
    logged = flab.probe_requests(iface)[-6:]
    assert {r.client for r in logged} == {u.address}
    assert [r.host for r in logged[:5]] == [h for h, _p in BUILTIN.values()]


def test_response_sizes_are_realistic(flab):
    """What the bytes benchmark depends on: each answer (status line, headers,
    body) is a few hundred bytes, as the real endpoints' are."""
    need_curl()
    for name, (host, path, *_rest) in ENDPOINTS.items():
        curl(flab, "eth0", host, path)
        size = flab.probe_requests("eth0")[-1].nbytes
        assert 100 <= size <= 600, (name, size)


def test_lan_traffic_follows_the_route_hook_and_a_cut_stops_it(fresh_flab):
    lb = fresh_flab
    before = lb.counters()
    client = lb.lan_client()
    client.wait_flowing("eth")                 # the kernel's order: eth0 (metric 100)
    hook = lb.dir / "route-hook"
    hook.write_text(lb.route_hook())
    hook.chmod(0o755)

    def primary(new, old):
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "UPLINK_EVENT": "primary",
               "UPLINK_INTERFACE": new or old, "UPLINK_PRIMARY": new,
               "UPLINK_PREVIOUS_PRIMARY": old, "UPLINK_PRIMARY_IPV4": new,
               "UPLINK_PREVIOUS_PRIMARY_IPV4": old, "UPLINK_PRIMARY_IPV6": "",
               "UPLINK_PREVIOUS_PRIMARY_IPV6": "", "UPLINK_ROUTE_TABLE": str(ROUTE_TABLE),
               "UPLINK_RULE_PRIORITY": str(RULE_PRIORITY),
               "UPLINK_ROUTE_PROTOCOL": str(ROUTE_PROTOCOL), "UPLINK_KEEP_ROUTES": "no"}
        done = subprocess.run(lb.exec_argv("gw", [str(hook)]), env=env, capture_output=True,
                              text=True, timeout=30)
        assert done.returncode == 0, done.stdout + done.stderr

    def lan_dev():
        return lb.route_dev("gw", INTERNET_ADDR, "from", LAN_HOST, "iif", LAN_IFACE_GW)

    primary("eth0", "")
    assert lb.owned_table() == [("default", lb.uplink("eth0").router, "eth0", "77")]
    assert rules_as_contracted(lb.owned_rules(4)), lb.owned_rules(4)
    assert lb.main_table_owned() == "", "the hook leaves the main table alone"
    assert lb.route_dev() == lan_dev() == "eth0"

    cut = time.time()
    with lb.cut_off("eth0"):
        assert lb.has_lower_up("eth0"), "a cut keeps the carrier"
        # The cut upstream's router still answers DNS; HTTP through it times out.
        assert lb.dns_query("eth0", BUILTIN["google"][0]).get("answers") == [INTERNET_ADDR]
        assert lb.http_get("eth0", "/generate_204", timeout=0.5).get("error") == "timeout"
        deadline = time.monotonic() + 10
        while len(client.results(since=cut + 1.0)) < 3:
            assert time.monotonic() < deadline, "LAN client stalled"
            time.sleep(0.1)
        after = client.results(since=cut + 1.0)
        assert not any(r.ok for r in after), f"LAN traffic went on through a cut uplink: {after}"
        moved = time.time()
        primary("wlan0", "eth0")
        assert lb.owned_table() == [("default", lb.uplink("wlan0").router, "wlan0", "77")]
        assert lb.route_dev() == lan_dev() == "wlan0"
        assert rules_as_contracted(lb.owned_rules(4)), "a second event must not add rules"
        client.wait_flowing("wifi", since=moved)
    back = time.time()
    primary("eth0", "wlan0")
    client.wait_flowing("eth", since=back)
    client.stop()

    # Forwarded LAN traffic is counted as fwd_* on the uplink that carried it,
    # never as the gateway's own (local_*) traffic.
    after = lb.counters()
    delta = {i: {k: after[i][k][1] - before[i][k][1] for k in after[i]} for i in after}
    assert delta["eth0"]["fwd_out"] > 0 and delta["eth0"]["fwd_in"] > 0
    assert delta["wlan0"]["fwd_out"] > 0 and delta["wlan0"]["fwd_in"] > 0
    assert delta["wwan0"]["fwd_out"] == delta["wwan0"]["fwd_in"] == 0
    assert delta["wwan0"]["local_out"] == 0, "nothing of the gateway's own went out of wwan0"
    # The LAN host's requests reach the upstream NATed to the uplink's address.
    lan = [r for r in lb.http_requests("wlan0") if r.is_lan]
    assert lan and {r.client for r in lan} == {lb.uplink("wlan0").address}
    assert LAN_HOST not in {r.client for r in lb.http_requests("eth0")}


def test_counters_count_the_gateways_own_traffic(flab):
    need_curl()
    before = flab.counters()
    assert flab.dns_query("wwan0", BUILTIN["debian"][0]).get("answers") == [INTERNET_ADDR]
    rc, status, _h, _b = curl(flab, "wwan0", *BUILTIN["debian"])
    assert (rc, status) == (0, "200")
    time.sleep(0.3)                          # the last ACK of the closed connection
    after = flab.counters()["wwan0"]
    d = {k: (after[k][0] - before["wwan0"][k][0], after[k][1] - before["wwan0"][k][1]) for k in after}
    # One UDP query and its answer; one TCP connection (handshake, request,
    # answer, teardown): all of it on wwan0, at the IP level.
    assert d["dns_out"][0] == 1 and d["dns_in"][0] == 1, d
    assert 60 <= d["dns_out"][1] <= 100 and 60 <= d["dns_in"][1] <= 120, d
    http_in, http_out = d["local_in"][1] - d["dns_in"][1], d["local_out"][1] - d["dns_out"][1]
    assert 300 <= http_in <= 900 and 300 <= http_out <= 900, d
    assert d["fwd_in"] == d["fwd_out"] == (0, 0)


def test_dhcp_lease_carries_the_metered_option(failover_ok):
    reason = failoverlab.dhcp_unavailable_reason()
    if reason is not None:
        skip_or_fail(reason, "DHCP in the failover lab")
    with FailoverLab(dhcp=("wlan0", "wwan0"), metered_dhcp=("wlan0",)) as lb:
        wlan0 = lb.lease_file("wlan0").read_text()
        assert f'option vendor-encapsulated-options "{METERED_OPTION}";' in wlan0, wlan0
        assert f"option domain-name-servers {lb.uplink('wlan0').router};" in wlan0, wlan0
        wwan0 = lb.lease_file("wwan0").read_text()
        assert "vendor-encapsulated-options" not in wwan0, wwan0
        routes = lb.ip("gw", "-4", "route", "show", "default").stdout
        assert f"default via {lb.uplink('wlan0').router} dev wlan0 metric 200" in routes, routes
        assert lb.http_get("wlan0", "/generate_204").get("status") == 204
        config = lb.agent_config()
        assert f"dhclient-leases = {lb.lease_dir}" in config
        assert "[interface wlan0]" not in config and "dns = 10.233.1.1" in config


def test_one_blocked_endpoint(flab):
    need_curl()
    with flab.blocked("eth0", "apple"):
        start = time.monotonic()
        rc, _status, _h, _b = curl(flab, "eth0", *BUILTIN["apple"], max_time=1)
        assert rc == 28 and time.monotonic() - start >= 0.9, "a blocked endpoint never answers"
        assert flab.probe_requests("eth0")[-1].status == "blocked"
        assert curl(flab, "eth0", *BUILTIN["google"])[:2] == (0, "204")
        assert curl(flab, "wlan0", *BUILTIN["apple"])[:2] == (0, "200"), "only eth0's upstream blocks"
    assert curl(flab, "eth0", *BUILTIN["apple"])[:2] == (0, "200")


def test_ipv6_and_metrics_options(failover_ok):
    """FailoverLab(ipv6=True, metrics=...): IPv6 through every uplink (AAAA answers
    for the probe names, the second HTTP server), break_ipv6 stopping IPv6 only,
    and the IPv4 metrics asked for deciding the kernel's own order."""
    with FailoverLab(ipv6=True, metrics={"wlan0": 0}) as lb:
        assert lb.route_dev() == "wlan0", "wlan0's metric 0 wins the main table"
        assert lb.route_dev("gw", failoverlab.INTERNET6_ADDR) == "eth0", "IPv6 keeps 100 < 200 < 300"
        for u in FAILOVER_UPLINKS:
            six = lb.dns_query(u.iface, BUILTIN["google"][0], "AAAA")
            assert six.get("answers") == [failoverlab.INTERNET6_ADDR], (u.iface, six)
            got = lb.http_get(u.iface, "/success.txt", address=failoverlab.INTERNET6_ADDR)
            assert got == {"status": 200, "body": "success\n"}, (u.iface, got)
            clients = {f[1] for f in failoverlab.log_fields(lb.http6_log(u.iface), 6)}
            assert clients == {u.address6}, (u.iface, clients)
        lb.break_ipv6("eth0")
        try:
            got = lb.http_get("eth0", "/generate_204", address=failoverlab.INTERNET6_ADDR, timeout=0.5)
            assert got.get("error") == "timeout", got
            assert lb.http_get("eth0", "/generate_204").get("status") == 204, "IPv4 keeps working"
            assert lb.dns_query("eth0", BUILTIN["google"][0]).get("answers") == [INTERNET_ADDR]
        finally:
            lb.mend_ipv6("eth0")
        assert lb.http_get("eth0", "/generate_204", address=failoverlab.INTERNET6_ADDR).get("status") == 204


def test_delay_relay_makes_a_slow_path(failover_ok):
    """FailoverLab(delays={"eth0": 150}): everything through eth0 (ARP, NDP, DNS,
    HTTP, IPv4 and IPv6) crosses the relay with 150 ms each way, the other uplinks
    do not; taking the relay's end down is carrier loss at gw."""
    with FailoverLab(delays={"eth0": 150}, ipv6=True) as lb:
        assert lb.peer_of("eth0") == ("rly1", failoverlab.RELAY_GW_END)
        for address in (INTERNET_ADDR, failoverlab.INTERNET6_ADDR):
            start = time.monotonic()
            assert lb.http_get("eth0", "/generate_204", address=address, timeout=5).get("status") == 204
            # A handshake, then the request and its answer: two round trips at least.
            assert time.monotonic() - start >= 0.6, (address, time.monotonic() - start)
        start = time.monotonic()
        assert lb.dns_query("eth0", BUILTIN["google"][0], timeout=3).get("answers") == [INTERNET_ADDR]
        assert time.monotonic() - start >= 0.3
        assert lb.http_get("wlan0", "/generate_204").get("status") == 204
        role, end = lb.peer_of("eth0")
        lb.ip(role, "link", "set", end, "down")
        lb.wait_lower_up("eth0", False)
        lb.ip(role, "link", "set", end, "up")
        lb.wait_lower_up("eth0", True)
        assert lb.http_get("eth0", "/generate_204", timeout=5).get("status") == 204
        assert lb.relays["eth0"].running()


def test_delay_relay_changes_its_delay_while_it_runs(failover_ok):
    """set_delay: the relay takes a new one-way delay from its file (a latency spike)
    and gives the built one back; a file that is not a number keeps the delay."""
    def round_trip():
        start = time.monotonic()
        assert lb.dns_query("eth0", BUILTIN["google"][0], timeout=5).get("answers") == [INTERNET_ADDR]
        return time.monotonic() - start

    def until(predicate, what):
        deadline = time.monotonic() + 10
        while True:
            took = round_trip()
            if predicate(took):
                return took
            assert time.monotonic() < deadline, f"{what}: the last query took {took:.3f} s"

    with FailoverLab(delays={"eth0": 5}) as lb:
        assert round_trip() < 0.2
        lb.set_delay("eth0", 400)
        # Within 100 ms of the change the relay reads it: queries from then on wait.
        assert until(lambda t: t >= 0.8, "800 ms round trips") < 1.2
        lb.delay_file("eth0").write_text("fast\n")
        # The second query starts 800 ms after the write, long after the relay read it.
        assert round_trip() >= 0.8 and round_trip() >= 0.8
        lb.set_delay("eth0", 5)
        until(lambda t: t < 0.2, "the built 10 ms round trip back")
        assert lb.relays["eth0"].running()
        with pytest.raises(ValueError):
            lb.set_delay("wlan0", 100)
        with pytest.raises(ValueError):
            lb.set_delay("eth0", -1)


def test_labs_without_delays_have_no_relay(flab):
    assert tuple(flab.ns) == failoverlab.FAILOVER_ROLES and not flab.relays
    assert flab.peer_of("eth0") == ("eth", "up-eth0")
    with pytest.raises(ValueError):
        FailoverLab(delays={"eth9": 150})
    with pytest.raises(ValueError):
        FailoverLab(delays={"eth0": 0})


def test_bursty_upload_is_answered_in_bursts(flab):
    """A datagram out every 50 ms, a burst of 4 back every second (every=1.0 here),
    through the primary eth0: many more packets leave than come back."""
    before = flab.counters()["eth0"]
    upload = flab.bursty_upload(every=1.0)
    try:
        deadline = time.monotonic() + 15
        while len(upload.replies()) < 16:
            assert upload.running() and time.monotonic() < deadline, upload.replies()
            time.sleep(0.1)
    finally:
        upload.stop()
    after = flab.counters()["eth0"]
    replies = upload.replies()
    assert {role for _t, role in replies} == {"eth"}
    bursts = [[replies[0][0]]]
    for t, _role in replies[1:]:
        if t - bursts[-1][-1] > 0.5:
            bursts.append([])
        bursts[-1].append(t)
    assert all(len(b) == 4 for b in bursts[:-1]), [len(b) for b in bursts]
    assert len(bursts) >= 4
    out_pkts, in_pkts = (after[k][0] - before[k][0] for k in ("fwd_out", "fwd_in"))
    assert out_pkts >= 3 * in_pkts > 0, (out_pkts, in_pkts)


def test_labs_without_the_flow_options_are_as_before(flab):
    """upstream_nat and lan_hosts change nothing unless asked for: no NAT table in
    any upstream, one LAN address, no flow server; and they refuse what cannot be."""
    assert not flab.upstream_nat and flab.lan_hosts == (LAN_HOST,) and not flab.flow_servers
    lan = [a["local"] for a in flab.addresses(LAN_IFACE_HOST, role="lan") if a["family"] == "inet"]
    assert lan == [LAN_HOST]
    for u in FAILOVER_UPLINKS:
        tables = run(flab.exec_argv(u.role, ["nft", "list", "tables"])).stdout
        assert UPSTREAM_NAT_TABLE not in tables, (u.role, tables)
    with pytest.raises(ValueError):
        FailoverLab(upstream_nat=True)
    with pytest.raises(ValueError):
        FailoverLab(cloud=True, lan_hosts=0)
    with pytest.raises(ValueError):
        flab.flow_server()


def move_route(lb, iface, metric=50):
    """A default route in gw through iface ahead of the lab's own (the way the route
    hook's table moves the gateway's and the LAN's traffic at a failover)."""
    lb.ip("gw", "route", "add", "default", "via", lb.uplink(iface).router, "dev", iface, "metric", str(metric))


def unmove_route(lb, iface, metric=50):
    lb.ip("gw", "route", "del", "default", "via", lb.uplink(iface).router, "dev", iface, "metric", str(metric))


def moved_flows_end(clients, since, via, ending, within):
    """Every client's connection that answered before `since` ends after it (with
    one of `ending`, within `within` s) and the client's next connection answers
    through `via`, nothing else. Waits (bounded) for that next connection's answer."""
    clients.wait_all(lambda c: c.answers(via, since=since), 10, f"answers through {via}")
    for c in clients:
        old = c.connection_at(since)
        end = c.end_of(old)
        assert end is not None and end.event in ending and since <= end.t < since + within, c.tail(12)
        new = [e for e in c.answers(since=end.t) if e.connection > old]
        assert new and {e.upstream for e in new} == {via}, c.tail(12)
        print(f"{c.name}: connection {old} {end.event} {end.t - since:.2f} s after the move, "
              f"connection {new[0].connection} answered through {via}")


def test_cloud_flows_upstream_nat_and_lan_hosts(failover_ok):
    """FailoverLab(cloud=True, upstream_nat=True, lan_hosts=2): the cloud's flow
    server names the upstream that carried each connection (eth: the kernel's
    order) and sees only that upstream's NAT address, never the gateway's; each
    long-lived client keeps its one connection, from the second LAN host when told
    (`ss` in the LAN namespace); a paused client sends nothing and goes on with the
    same connection; a burst of short connections from both hosts is answered
    (and is fast: the spread tests count 2,000 of them); reload_firewall() removes
    another program's table and leaves the LAN's NAT working and open connections
    alive."""
    with FailoverLab(cloud=True, upstream_nat=True, lan_hosts=2) as lb:
        assert lb.lan_hosts == (LAN_HOST, LAN_HOST2)
        clients = lb.flow_clients(3)
        second = lb.flow_clients(1, name="second", source=LAN_HOST2)
        clients.wait_all(lambda c: len(c.answers("eth")) >= 5, 10, "five answers through eth")
        second.wait_all(lambda c: len(c.answers("eth")) >= 5, 10, "five answers through eth")
        assert {peer for _t, peer in lb.flow_server_peers()} == {lb.upstream_nat_address("eth0")}
        established = run(lb.exec_argv("lan", ["ss", "-Htn", "state", "established", "dst", CLOUD_ADDR])).stdout
        sources = sorted(line.split()[-2].rsplit(":", 1)[0] for line in established.splitlines())
        assert sources == [LAN_HOST] * 3 + [LAN_HOST2], established
        with pytest.raises(ValueError):
            lb.flow_clients(1, source="192.168.77.200")

        # An idle session: nothing between `paused` and `resumed`, the same connection after.
        idle, others = FlowClients(clients[:1]), FlowClients(clients[1:])
        idle[0].pause()
        idle.wait_all(lambda c: [e for e in c.events() if e.event == "paused"], 5, "the paused line")
        paused = next(e for e in idle[0].events() if e.event == "paused")
        # The others answer 5 times meanwhile: the idle one had as long to send.
        others.wait_all(lambda c: len(c.answers(since=paused.t)) >= 5, 10, "answers while one is paused")
        idle[0].resume()
        idle.wait_all(lambda c: [e for e in c.events() if e.event == "resumed"]
                      and c.answers(since=next(e.t for e in c.events() if e.event == "resumed")), 5,
                      "an answer after the resumed line")
        resumed = next(e for e in idle[0].events() if e.event == "resumed")
        assert not [e for e in idle[0].events() if paused.t < e.t < resumed.t], idle[0].tail(12)
        assert {e.connection for e in idle[0].events()} == {1}, idle[0].tail(12)

        start = time.monotonic()
        flows = lb.short_flows(1000, sources=lb.lan_hosts)
        took = time.monotonic() - start
        print(f"\n1,000 short connections in {took:.2f} s")
        assert len(flows) == 1000 and all(f.ok and f.upstream == "eth" for f in flows), \
            [f for f in flows if not f.ok][:5]
        assert {f.source for f in flows} == {LAN_HOST, LAN_HOST2}
        assert sorted(f.number for f in flows) == list(range(1, 1001))

        # An admin's firewall reload: another program's table goes, the LAN's NAT stays.
        run(lb.exec_argv("gw", ["nft", "-f", "-"]), input="table inet other { }\n")
        reloaded = time.time()
        lb.reload_firewall()
        tables = run(lb.exec_argv("gw", ["nft", "list", "tables"])).stdout
        assert "other" not in tables and NAT_TABLE in tables, tables
        clients.wait_all(lambda c: len(c.answers("eth", since=reloaded)) >= 5, 10, "answers after the reload")
        assert not any(e.ended for c in clients + second for e in c.events()), [c.tail() for c in clients]
        assert [f.upstream for f in lb.short_flows(10)] == ["eth"] * 10


def test_a_moved_flow_is_reset_behind_upstream_nat(failover_ok):
    """Today's route failover without pinning, driven by hand (no agent): the
    gateway's default route moved to wlan0 (as the route hook's table moves it)
    while long-lived connections go through eth0: each is reset within a second (its
    next packet is masqueraded anew to wlan0's address and leaves through the wifi
    upstream, whose NAT address the cloud has no connection from), and its client's
    next connection answers through wifi; the route back, the same toward eth."""
    with FailoverLab(cloud=True, upstream_nat=True) as lb:
        clients = lb.flow_clients(4)
        clients.wait_all(lambda c: len(c.answers("eth")) >= 5, 10, "five answers through eth")
        moved = time.time()
        move_route(lb, "wlan0")
        moved_flows_end(clients, moved, "wifi", ("reset",), within=1.0)
        back = time.time()
        unmove_route(lb, "wlan0")
        moved_flows_end(clients, back, "eth", ("reset",), within=1.0)


def test_upstream_nat_ends_a_moved_flow_that_static_snat_would_keep(failover_ok):
    """Why upstream_nat exists: behind static SNAT in the gateway
    (plansupport.snat_to_fixed_addresses: no new NAT when the output interface
    changes) a connection whose packets are moved to wlan0 lives on in a cloud lab
    without upstream NAT (out through the wifi upstream, its answers back through
    eth's to eth0's address: a path no two real providers give). With upstream NAT
    switched on, the same connection ends (the cloud now sees the wifi upstream's
    address and answers there, and that upstream cannot deliver to eth0's address:
    a timeout) and its client's next connection answers through wifi."""
    with FailoverLab(cloud=True) as lb:
        snat_to_fixed_addresses(lb)
        clients = lb.flow_clients(2)
        clients.wait_all(lambda c: len(c.answers("eth")) >= 5, 10, "five answers through eth")
        assert {peer for _t, peer in lb.flow_server_peers()} == {lb.uplink("eth0").address}
        before = lb.counters()["wlan0"]["fwd_out"][0]
        moved = time.time()
        move_route(lb, "wlan0")
        clients.wait_all(lambda c: len(c.answers(since=moved)) >= 20, 10, "20 answers after the move")
        assert lb.counters()["wlan0"]["fwd_out"][0] - before >= 40, "the connections left through wlan0"
        for c in clients:
            assert {(e.connection, e.event, e.upstream) for e in c.events(since=moved)} == {(1, "answer", "eth")}, \
                c.tail(12)
        nat = time.time()
        lb.set_upstream_nat(True)
        moved_flows_end(clients, nat, "wifi", ("timeout", "reset"), within=2.0)
