/// `uplinkd --help`: every command and option in one screen.
let helpText = """
usage: uplinkd check IFACE... [options]
       uplinkd links [--json] [--all] [--watch] [--config FILE]
       uplinkd run [--config FILE] [--state FILE] [--hooks-dir DIR] [--journal FILE]
                   [--plan-file FILE] [--verbose]
       uplinkd status [--json | --get [IFACE] FACT] [--state FILE]
       uplinkd config check [--config FILE]
       uplinkd wait-online [IFACE... | --any] [--timeout SECONDS] [--captive-ok]
                           [--state FILE]
       uplinkd routes [--remove] [--config FILE]
       uplinkd resolve IFACE NAME [--family 4|6] [--config FILE]
       uplinkd plan [IFACE] [--json] [--state FILE]
       uplinkd plan IFACE --reset [--config FILE] [--state FILE]
       uplinkd history [IFACE] [--since WHEN] [--json] [--config FILE] [--journal FILE]
       uplinkd availability [--period day|week|month] [--json] [--config FILE]
                            [--journal FILE]
       uplinkd --version | --help

Decides for each named interface whether it reaches the internet, probing over HTTP
through that interface only (SO_BINDTODEVICE), without a running agent.

check options:
  --json                 one JSON object per interface, one per line
  --config FILE          configuration file (default /etc/uplinkd/uplinkd.conf if it
                         exists, else built-in defaults); FILE must exist
  --timeout SECONDS      time limit of each probe (default 5; e.g. 2.5 or 500ms)
  --threshold PERCENT    share of probes that must validate for online (default 50)
  --url URL              probe URL; repeat for several. Replaces the configured probes.
                         Options that follow apply to the last --url:
    --expect-status N      expected HTTP status (default 204, or 200 with a body check)
    --expect-body TEXT     body equals TEXT (surrounding whitespace ignored)
    --expect-contains TEXT body contains TEXT
    --expect-regex REGEX   body matches REGEX
    --validator "PATH ARG..."  external validator: body on stdin, exit 0 = valid
  --verbose, -v          log what is being done on stderr

links options:
  --json                 one JSON object per interface (and per event), one per line
  --all                  every interface, not only uplinks (each marked "uplink")
  --watch                after the list, print link events as the kernel reports them
                         until TERM or INT: appeared, disappeared, renamed, admin-up,
                         admin-down, carrier-up, carrier-down, address-added,
                         address-removed, route-added, route-removed (default routes),
                         resync (after a netlink overflow); each with the link verdict
  --config FILE          as for check ([uplinks], [links], [interface NAME])

run: the agent in the foreground. Probes every uplink (at once on link events, every
  [agent] interval while stable, faster while suspect), keeps verdicts with
  hysteresis, picks the primary uplink, writes the state file (default
  /run/uplinkd/state) and runs the hooks of /etc/uplinkd/hooks.d on every verdict
  and primary change. TERM/INT: finish a running hook, write the final state, exit
  0. HUP: reload the configuration (an invalid one is reported and ignored).
  --verbose once for info, twice for debug logging.

status: the state file as written by run: primary, each uplink's verdict, reason,
  since when, probe bytes; how old the data is and whether the agent still runs.
  Exit status 0 the agent runs with a primary, 1 it runs with no uplink online,
  3 it does not run (stale facts), 69 no readable state file.
  --get FACT, --get IFACE FACT  one value (uplinkd-state(5) names every fact),
  empty for none; exit 0, 1 no such uplink in the file, 64 no such fact.

history: the outage journal ([agent] journal-file, default /var/lib/uplinkd/journal):
  periods without a primary (site), an uplink not online, failovers, the agent's
  own absences; IFACE: those about it; --since 12h, 7d, 2026-12-01 or @EPOCH.
availability: per uplink and for the site over the last day, week or month:
  available %, outages, longest, mean time to recover. Both work without a
  running agent; exit 0, 69 the journal cannot be read.

config check: validates the configuration (and lists hooks that will not run)
  without running anything; exit 0, or 78 with the file:line:key error.

wait-online: for boot ordering (network-online.target), as
  systemd-networkd-wait-online. Waits until the running agent's state file says:
  it has a primary uplink (no arguments); at least one uplink is online (--any);
  or every named IFACE is online; and the hooks of its latest decision have run.
  --captive-ok           captive counts as online
  --timeout SECONDS      give up after this long (default 120; e.g. 30, 2.5, 500ms,
                         2m; 0 waits forever)
  --state FILE           as for status (default /run/uplinkd/state)
  Exit status 0 once it holds, 1 on timeout (stderr says what was missing), 64
  usage error. A state file whose agent stopped or is gone never satisfies it.

routes: lists uplinkd's own routing entries (its rules and table, which the
  route-failover hook keeps; [agent] route-table, rule-priority, route-protocol),
  and with [flows] pinning the flow rules, tables, the nftables table inet uplinkd
  and the connections pinned to each uplink; --remove deletes them all (the agent
  does so at its stop unless keep-routes-on-stop).
  Exit status 0, 69 when the kernel refused (not root), 78 configuration error.

resolve: NAME's addresses through IFACE's own DNS servers, found and asked as its
  probes do (bound to IFACE, never the system resolver), one a line; for hooks
  (curl --resolve). An IP address is printed back.
  --family 4|6           only IPv4 or only IPv6 (default both)
  --config FILE          as for check ([dns], [interface NAME] dns)
  Exit status 0, 1 the name has no address, 64 usage error, 69 no such interface
  or no DNS server known for it, 78 configuration error.

plan: the data plans ([interface NAME] plan = 5GB ...) as the state file shows them:
  bytes used in the current cycle, each way and against the plan, and when the
  cycle ends (local time).
  --json                 as JSON
  --reset                start a new cycle for IFACE now (the carrier's cycle
                         differs): the running agent takes it (SIGUSR1); without one
                         the plan file itself is changed (--config names it)
  --state FILE           as for status
  Exit status 0, 1 no plan, 64 usage error, 69 no state file or reset not taken,
  78 configuration error.

check exit status (one interface): 0 online, 1 captive, 2 limited, 3 down or no such
interface; several interfaces: the highest of theirs. 64 usage error,
78 configuration error, 70 internal error.
"""
