"""Tests of the shipped hooks (hooks/ in the repository) and their library.

- 50-route-failover, with the agent running in the namespace lab: the route the
  gateway uses for the lab's internet address (`ip route get`) follows the primary
  uplink through the hook's rules and table 7077, and comes back after recovery
  and hold-down; the main table is never touched (the backups keep their own
  default routes, no copy of the hook's there); with no online uplink the table is
  empty and the main table's order applies; a clean stop removes rules and table.
- 60-portal-login logging into the lab's WISPr and click-through portals, and its
  command method; the 90-notify example.
- The hook library (hooks/lib/uplinkd-hook.sh): how a hook finds it, and its
  functions under every POSIX shell found here (dash, busybox sh).
- Every shipped hook and the library pass `shellcheck -s sh` (POSIX sh, no
  bashisms).
- uplinkd-hooks(7), SHIPPED HOOKS, documents every settings key each hook reads
  (conf_value), and no key that none reads: a file check, no root needed.

Hooks started by the agent or by hand here get UPLINKD_HOOK_LIB pointing at the
repository's library, so an installed /usr/lib/uplinkd/hook-lib.sh never stands in.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agentrun import config_text
from failoverlab import main_table_owned, owned_rules, owned_table, rules_as_contracted
from lab import INTERNET_ADDR
from pytesthelp import ok

HOOKS = Path(__file__).resolve().parents[2] / "hooks"
SHIPPED = sorted(p for p in HOOKS.iterdir() if p.is_file() and p.name != "README.md")
HOOK_LIB = HOOKS / "lib" / "uplinkd-hook.sh"
INSTALLED_LIB = Path("/usr/lib/uplinkd/hook-lib.sh")
HAND_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
SHELLS = [sh for sh in (["dash"], ["busybox", "sh"]) if shutil.which(sh[0])]


def via_wrapper(name, **env) -> str:
    """A hook for the agent's hooks directory that runs the shipped hook `name`
    with env (its settings file, not /etc) and the repository's hook library."""
    assigns = " ".join(f"{k}='{v}'" for k, v in dict(UPLINKD_HOOK_LIB=HOOK_LIB, **env).items())
    return f"#!/bin/sh\n{assigns} exec '{HOOKS / name}'\n"


def by_hand(hook, env, lib=HOOK_LIB) -> subprocess.CompletedProcess:
    """A hook run as a hook author would: only PATH, UPLINKD_HOOK_LIB (unless lib is
    None) and env in its environment."""
    full = {"PATH": HAND_PATH, **({"UPLINKD_HOOK_LIB": str(lib)} if lib else {}), **env}
    return subprocess.run([str(hook)], env=full, capture_output=True, text=True, timeout=30)


def route_dev(lb) -> str:
    """The device the gateway would use for the lab's internet address."""
    out = lb.ip("gw", "route", "get", INTERNET_ADDR).stdout.split()
    return out[out.index("dev") + 1]


def wait(run, predicate, timeout, what):
    """run.wait_until; its AgentError (with the run's transcript) fails the test."""
    return ok(run.wait_until, predicate, timeout, what)


def test_route_failover_follows_the_primary(fresh_lab, serve, blackhole, agent, tmp_path):
    lb = fresh_lab
    serve(lb, "inet", "internet")
    serve(lb, "portal", "internet")
    # Without the hook the gateway prefers wwan0 (metric 100), the dead uplink.
    assert route_dev(lb) == "wwan0"
    # Strict reverse-path filtering on a backup: the hook's option makes it loose.
    subprocess.run(lb.exec_argv("gw", ["sysctl", "-q", "-w", "net.ipv4.conf.wlan0.rp_filter=1"]), check=True)
    conf = tmp_path / "route-failover.conf"
    conf.write_text("LOOSE_RP_FILTER=yes\n")
    run = agent(lb, hooks={"50-route-failover": via_wrapper(
        "50-route-failover", UPLINKD_ROUTE_FAILOVER_CONF=conf)})
    wait(run, lambda: route_dev(lb) == "eth0" and all(rules_as_contracted(owned_rules(lb, f))
                                                       for f in (4, 6)),
         15, "route via eth0 once eth0 is primary, the hook's two rules in each family")
    assert owned_table(lb) == [("default", "10.231.1.1", "eth0", "77")], owned_table(lb)
    for family in (4, 6):
        assert main_table_owned(lb, family) == "", "the hook must leave the main table alone"
    # The main table is as it was, so probes bound to a backup keep working.
    defaults = lb.ip("gw", "-4", "route", "show", "default").stdout
    for u in lb.uplinks:
        if u.gateway:
            assert f"default via {u.gateway} dev {u.iface} metric {u.metric}" in defaults, defaults

    rp = lambda: subprocess.run(lb.exec_argv("gw", ["cat", "/proc/sys/net/ipv4/conf/wlan0/rp_filter"]),  # noqa: E731
                                capture_output=True, text=True).stdout.strip()
    wait(run, lambda: rp() == "2", 10, "rp_filter on wlan0 loosened by the hook")

    blackhole(lb, "inet")
    wait(run, lambda: route_dev(lb) == "wlan0", 20, "route moved to wlan0 after eth0's upstream was cut")
    assert owned_table(lb) == [("default", "10.231.2.1", "wlan0", "77")], owned_table(lb)

    lb.unblackhole("inet")
    wait(run, lambda: route_dev(lb) == "eth0", 25, "route back on eth0 after recovery and hold-down")

    # No online uplink: table 7077 empties, the main table's own order applies again.
    lb.ip("portal", "link", "set", lb.peer_of("wlan0")[1], "down")
    lb.ip("inet", "link", "set", lb.peer_of("eth0")[1], "down")
    wait(run, lambda: owned_table(lb) == [], 15, "table 7077 emptied with no online uplink")
    assert route_dev(lb) == "wwan0", "the main table's lowest metric (wwan0, 100) applies"
    assert run.stop() == 0
    # A clean stop takes uplinkd's rules away (keep-routes-on-stop = no).
    assert owned_rules(lb, 4) == [] and owned_rules(lb, 6) == [] and owned_table(lb) == []


@pytest.mark.parametrize("hook", SHIPPED + [HOOK_LIB],
                         ids=[p.name for p in SHIPPED] + ["lib/uplinkd-hook.sh"])
def test_shipped_hooks_pass_shellcheck(hook):
    """`shellcheck -s sh` on each hook and on the library; a hook also with -x,
    which follows it into the library it sources."""
    if shutil.which("shellcheck") is None:
        if os.environ.get("UPLINKD_REQUIRE_LAB"):
            pytest.fail("shellcheck is not installed; .ci/setup installs it")
        pytest.skip("shellcheck not installed (apt-get install shellcheck)")
    for extra in ([], ["-x"]) if hook != HOOK_LIB else ([],):
        done = subprocess.run(["shellcheck", "-s", "sh", *extra, str(hook)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def test_hooks_are_shipped():
    assert SHIPPED, "hooks/ holds no hook"


WISPR_PASSWORD = "s3cret &pass!"


def portal_agent(agent, lb, tmp_path, method, password=WISPR_PASSWORD):
    """The agent (conftest's `agent` fixture) watching only wlan0, with the
    portal-login hook configured for `method` (its configuration and credentials in
    tmp_path, not /etc)."""
    conf = tmp_path / "portal-login.conf"
    creds = tmp_path / "portal-credentials"
    creds.write_text(f"USERNAME=labuser\nPASSWORD={password}\n")
    creds.chmod(0o600)
    conf.write_text(f"METHOD={method}\nINTERFACES=wlan0\nCREDENTIALS={creds}\n")
    return agent(lb, config_text(uplinks="wlan0"), hooks={
        "60-portal-login": via_wrapper("60-portal-login", UPLINKD_PORTAL_CONF=conf)})


def state_of(run, iface):
    st = run.state()
    return st["uplinks"].get(iface, {}).get("verdict") if st else None


@pytest.mark.parametrize("mode, method, success_line", [
    ("portal-wispr", "wispr", "WISPr: login on wlan0 succeeded"),
    ("portal-click", "click-through", "click-through: submitted the portal form on wlan0"),
])
def test_portal_login_brings_the_uplink_online(fresh_lab, serve, agent, tmp_path, mode, method,
                                               success_line):
    serve(fresh_lab, "portal", mode)
    run = portal_agent(agent, fresh_lab, tmp_path, method)
    wait(run, lambda: state_of(run, "wlan0") == "online", 20, "wlan0 online after the portal login")
    # Hooks run after the state is written: wait for the recording hook's line too.
    events = ok(run.wait_hooks, [("verdict", "wlan0", "captive"), ("verdict", "wlan0", "online")], 10,
                what="the hook lines for wlan0 captive and coming online")
    shorts = [e.short for e in events]
    assert shorts[0].startswith("verdict wlan0 unknown->captive"), shorts
    assert "verdict wlan0 captive->online validated" in shorts, shorts
    log = run.stderr_since(0)
    assert success_line in log, log
    assert WISPR_PASSWORD not in log and "s3cret" not in log, "the password reached the log"
    assert "s3cret" not in run.state_path.read_text()


def test_wispr_wrong_credentials_stay_captive_with_a_clear_line(fresh_lab, serve, agent, tmp_path):
    serve(fresh_lab, "portal", "portal-wispr")
    run = portal_agent(agent, fresh_lab, tmp_path, "wispr", password="Xq9-not-it")
    wait(run, lambda: "wrong credentials" in run.stderr_since(0), 15, "the refused login logged")
    # The agent probed again after the hook; the portal still answers for itself.
    wait(run, lambda: run.stderr_since(0).count("round on wlan0") >= 2, 10, "a second round on wlan0")
    assert state_of(run, "wlan0") == "captive"
    assert "Xq9-not-it" not in run.stderr_since(0), "the password reached the log"


def test_notify_example_logs_and_posts_the_event(tmp_path):
    """The notify example run by hand, as a hook author would: its log line, and its
    JSON POST to a receiver on this host's loopback."""
    import http.server
    import json
    import threading

    received = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.handle_request, daemon=True).start()
    conf = tmp_path / "notify.conf"
    conf.write_text(f"URL=http://127.0.0.1:{server.server_address[1]}/events\nEVENTS=outage verdict\n")
    env = {"UPLINKD_NOTIFY_CONF": str(conf),
           "UPLINK_EVENT": "verdict", "UPLINK_INTERFACE": "wlan0", "UPLINK_KIND": "wifi",
           "UPLINK_VERDICT": "captive", "UPLINK_PREVIOUS": "online", "UPLINK_REASON": "redirect",
           "UPLINK_PORTAL_URL": 'http://portal.example/a"b', "UPLINK_PRIMARY": "eth0",
           "UPLINK_PREVIOUS_PRIMARY": "eth0", "UPLINK_TIME": "1795000000"}
    done = by_hand(HOOKS / "90-notify", env)
    server.server_close()
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'wlan0 (wifi): online -> captive (redirect), portal http://portal.example/a"b\n'
    assert len(received) == 1
    event = json.loads(received[0])
    assert event["verdict"] == "captive" and event["portal_url"] == 'http://portal.example/a"b'
    assert event["time"] == 1795000000 and event["primary"] == "eth0"
    assert event["outage_start"] is None


def test_notify_example_tells_of_outages_only_by_default(tmp_path):
    """Without EVENTS= the notify example tells of outages and nothing else: one line
    per outage with its length and reasons; a verdict or primary event is silent."""
    conf = tmp_path / "notify.conf"
    conf.write_text("")
    outage = {"UPLINKD_NOTIFY_CONF": str(conf), "UPLINK_EVENT": "outage", "UPLINK_PRIMARY": "eth0",
              "UPLINK_OUTAGE_START": "1795000000", "UPLINK_OUTAGE_END": "1795000031",
              "UPLINK_OUTAGE_DURATION_MS": "30512", "UPLINK_OUTAGE_REASONS": "eth0:no-carrier wlan0:timeout"}
    done = by_hand(HOOKS / "90-notify", outage)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "site offline for 31 s (eth0:no-carrier wlan0:timeout); primary now eth0\n"
    for kind in ("verdict", "primary"):
        quiet = by_hand(HOOKS / "90-notify", {"UPLINKD_NOTIFY_CONF": str(conf), "UPLINK_EVENT": kind,
                                              "UPLINK_INTERFACE": "eth0", "UPLINK_PRIMARY": "eth0"})
        assert (quiet.returncode, quiet.stdout) == (0, ""), quiet.stderr
    # A length that is not a plain whole number is never used in arithmetic (dash
    # takes 0123 for octal and refuses 09).
    for odd_value in ("x[$(id)]", "09", "0123", "1234567890123456"):
        odd = by_hand(HOOKS / "90-notify", dict(outage, UPLINK_OUTAGE_DURATION_MS=odd_value))
        assert odd.returncode == 0 and odd.stdout.startswith("site offline for 0 s"), (odd_value, odd.stderr)


def test_portal_login_command_method_gets_the_portal_url(tmp_path):
    """METHOD=command runs the user's program with the portal URL (hook run by hand)."""
    seen = tmp_path / "seen"
    command = tmp_path / "my-login"
    command.write_text(f"#!/bin/sh\nprintf '%s %s\\n' \"$1\" \"$UPLINK_INTERFACE\" > '{seen}'\n")
    command.chmod(0o755)
    conf = tmp_path / "portal-login.conf"
    conf.write_text(f"METHOD=command\nCOMMAND={command}\n")
    env = {"UPLINKD_PORTAL_CONF": str(conf),
           "UPLINK_EVENT": "verdict", "UPLINK_VERDICT": "captive", "UPLINK_INTERFACE": "wlan0",
           "UPLINK_PORTAL_URL": "http://portal.example/login?a=1"}
    done = by_hand(HOOKS / "60-portal-login", env)
    assert done.returncode == 0, done.stderr
    assert seen.read_text() == "http://portal.example/login?a=1 wlan0\n"
    # Not captive: nothing to do.
    env["UPLINK_VERDICT"] = "online"
    seen.unlink()
    assert by_hand(HOOKS / "60-portal-login", env).returncode == 0
    assert not seen.exists()


# --- the hook library ----------------------------------------------------------------

def quiet_env(tmp_path) -> dict:
    """An event every shipped hook lets pass without acting, and settings files
    that do not exist (never the host's /etc/uplinkd)."""
    none = str(tmp_path / "no-such.conf")
    return {"UPLINK_EVENT": "verdict", "UPLINK_VERDICT": "online", "UPLINKD_ROUTE_FAILOVER_CONF": none,
            "UPLINKD_PORTAL_CONF": none, "UPLINKD_NOTIFY_CONF": none}


@pytest.mark.parametrize("hook", SHIPPED, ids=[p.name for p in SHIPPED])
def test_hook_without_its_library_stops_with_a_clear_error(hook, tmp_path):
    missing = tmp_path / "no-such-lib.sh"
    done = by_hand(hook, quiet_env(tmp_path), lib=missing)
    assert done.returncode == 1, done
    assert "hook library" in done.stderr and str(missing) in done.stderr, done.stderr
    assert done.stdout == "", "a hook without its library must do nothing"


@pytest.mark.parametrize("hook", SHIPPED, ids=[p.name for p in SHIPPED])
def test_hook_finds_the_library_beside_it(hook, tmp_path):
    """A copied hooks directory: without UPLINKD_HOOK_LIB the hook sources
    lib/uplinkd-hook.sh beside it, unless the package's copy is installed (which
    comes first); with neither it stops with a clear error."""
    hooks_d = tmp_path / "hooks.d"
    (hooks_d / "lib").mkdir(parents=True)
    copy = hooks_d / hook.name
    shutil.copy2(hook, copy)
    if not INSTALLED_LIB.exists():
        done = by_hand(copy, quiet_env(tmp_path), lib=None)
        assert done.returncode == 1, done
        assert str(hooks_d / "lib" / "uplinkd-hook.sh") in done.stderr, done.stderr
    (hooks_d / "lib" / "uplinkd-hook.sh").write_text(
        HOOK_LIB.read_text() + "echo 'library beside the hook sourced' >&2\n")
    done = by_hand(copy, quiet_env(tmp_path), lib=None)
    assert done.returncode == 0, done
    beside = "library beside the hook sourced" in done.stderr
    assert beside != INSTALLED_LIB.exists(), (done.stderr, f"{INSTALLED_LIB} exists: "
                                              f"{INSTALLED_LIB.exists()}")


def lib_script(shell, script, cwd) -> subprocess.CompletedProcess:
    """`script` run by `shell` under set -eu after sourcing the library."""
    return subprocess.run([*shell, "-c", f'set -eu\n. "$1"\n{script}', "sh", str(HOOK_LIB)],
                          cwd=cwd, env={"PATH": HAND_PATH}, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("shell", SHELLS, ids=[" ".join(s) for s in SHELLS])
def test_hook_library_reads_settings_never_executes_them(shell, tmp_path):
    conf = tmp_path / "test.conf"
    url = "https://example.invalid/$(touch${IFS}PWNED)`touch${IFS}PWNED2`"
    conf.write_text("\n".join([
        "# METRIC=1", "METRIC=20", " METRIC=30",             # comment and indented: not settings
        "PROTO=5", "PROTO=x7",                               # the last line decides: not digits
        "FLAG=yes", "FLAG=no", f"URL={url}", "CMD=/usr/local/sbin/x", "REL=relative/x",
        "EMPTY=", "SPACED=a b", "TRAIL=yes ", "DOLLAR=$(touch PWNED3); `touch PWNED4`",
    ]) + "\n")
    done = lib_script(shell, f"""
F='{conf}'
get() {{ st=0; v=$(conf_value "$@") || st=$?; printf '%s|%s|%s\\n' "$2" "$v" "$st"; }}
get "$F" METRIC digits 10
get "$F" PROTO digits 77
get "$F" FLAG yes-no yes
get "$F" URL http-url
get "$F" CMD abs-path
get "$F" REL abs-path /default
get "$F" EMPTY any dflt
get "$F" SPACED
get "$F" TRAIL yes-no no
get "$F" DOLLAR
get "$F" MISSING digits 5
get '{tmp_path}/no-such.conf' METRIC digits 10
get "$F" A.B
get "$F" METRIC no-such-type 1
""", tmp_path)
    assert done.returncode == 0, done
    assert done.stdout.splitlines() == [
        "METRIC|20|0", "PROTO|77|1", "FLAG|no|0", f"URL|{url}|0", "CMD|/usr/local/sbin/x|0",
        "REL|/default|1", "EMPTY|dflt|0", "SPACED|a b|0", "TRAIL|no|1",
        "DOLLAR|$(touch PWNED3); `touch PWNED4`|0", "MISSING|5|0", "METRIC|10|0",
        "A.B||2", "METRIC||2",
    ], done.stdout
    assert "unusable key name" in done.stderr and "unknown type" in done.stderr, done.stderr
    assert not list(tmp_path.glob("PWNED*")), "something in the settings file was executed"


@pytest.mark.parametrize("shell", SHELLS, ids=[" ".join(s) for s in SHELLS])
def test_hook_library_checks_interface_names_and_values(shell, tmp_path):
    done = lib_script(shell, r"""
for n in wlan0 eth0.100 br-lan wwan0@x a_b; do valid_ifname "$n" && echo "ok $n"; done
for n in "" "a b" ../etc 'a$b' x/y "$(printf 'a\nb')"; do valid_ifname "$n" || echo bad; done
(require_ifname "a/b" UPLINK_PRIMARY) || echo "exit $?"
(require_ifname "") || echo "exit $?"
require_ifname wlan0 UPLINK_INTERFACE && echo "wlan0 passes"
for v in http://a https://b/c?d=1; do value_is http-url "$v" && echo "url ok"; done
for v in ftp://a "http://a b" "$(printf 'http://a\tb')" "$(printf 'http://a\001')" ""; do
    value_is http-url "$v" || echo "url bad"
done
for t in digits:0 digits:12a yes-no:yes yes-no:YES abs-path:/x abs-path:x ifname:eth0 ifname:a/b any:x any:; do
    value_is "${t%%:*}" "${t#*:}" && echo "$t yes" || echo "$t no"
done
""", tmp_path)
    assert done.returncode == 0, done
    assert done.stdout.splitlines() == (
        ["ok wlan0", "ok eth0.100", "ok br-lan", "ok wwan0@x", "ok a_b"] + ["bad"] * 6
        + ["exit 1", "exit 1", "wlan0 passes"] + ["url ok"] * 2 + ["url bad"] * 5
        + ["digits:0 yes", "digits:12a no", "yes-no:yes yes", "yes-no:YES no", "abs-path:/x yes",
           "abs-path:x no", "ifname:eth0 yes", "ifname:a/b no", "any:x yes", "any: no"]), done.stdout
    assert done.stderr.splitlines() == ["refusing odd interface name in UPLINK_PRIMARY",
                                        "refusing odd interface name"], done.stderr


# --- the manual page's SHIPPED HOOKS and the hooks' settings ---------------------------

HOOKS_PAGE = HOOKS.parent / "packaging" / "debian" / "uplinkd-hooks.7"
# A hook reads a setting as `conf_value "$FILE" KEY ...` (hooks/lib/uplinkd-hook.sh).
SETTING_READ = re.compile(r'conf_value\s+"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"\s+([A-Za-z_][A-Za-z0-9_]*)(?=\s|\)|$)')
# Its settings file: CONF=${UPLINKD_..._CONF:-/etc/uplinkd/NAME.conf}
SETTINGS_FILE = re.compile(r'^CONF=\$\{[A-Za-z_][A-Za-z0-9_]*:-(/[^}]+)\}', re.M)
# A key as the page writes it: KEY= at the start of a word.
PAGE_KEY = re.compile(r"(?<![\w-])([A-Z][A-Z0-9_]*)=")
ROFF_ESCAPE = re.compile(r"\\(f(?:\[[^]]*\]|\(..|.)|\(..|\[[^]]*\]|.)")
ALTERNATING = {".BI": "BI", ".BR": "BR", ".IB": "IB", ".IR": "IR", ".RB": "RB", ".RI": "RI"}


def settings_read(script: str) -> tuple[set, list]:
    """The keys a hook script reads from settings files, and the conf_value calls
    (outside comments) whose key is not written out, which no check can follow."""
    keys, unknown = set(), []
    for line in script.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for call in re.finditer(r"\bconf_value\b", line):
            found = SETTING_READ.match(line, call.start())
            if found:
                keys.add(found.group(1))
            else:
                unknown.append(line.strip())
    return keys, unknown


def roff_arguments(text: str) -> list:
    """A macro line's arguments: separated by blanks, a double-quoted one may hold
    blanks."""
    return [quoted if quoted or not plain else plain
            for quoted, plain in re.findall(r'"((?:[^"]|"")*)"|(\S+)', text)]


def roff_runs(text: str, font: str) -> list:
    """(font, text) runs of roff text starting in `font` ("B" bold, "I", "R"): \\f
    changes the font (\\fP back to the one before), \\- is a hyphen, \\e a
    backslash, other escapes stand for a character that is no part of a key."""
    runs, previous, at = [(font, "")], font, 0
    for escape in ROFF_ESCAPE.finditer(text):
        runs[-1] = (font, runs[-1][1] + text[at:escape.start()])
        at = escape.end()
        code = escape.group(1)
        if code.startswith("f"):
            name = code[1:].strip("[]").lstrip("(")
            font, previous = (previous, font) if name == "P" else ("B" if "B" in name else name[:1], font)
            runs.append((font, ""))
        else:
            runs[-1] = (font, runs[-1][1] + {"-": "-", "e": "\\", "&": "", "%": "", "c": ""}.get(code, " "))
    runs[-1] = (font, runs[-1][1] + text[at:])
    return runs


def shipped_hooks_section(page: str) -> dict:
    """uplinkd-hooks(7)'s SHIPPED HOOKS by subsection: {.SS title (None before the
    first): (keys, plain text)}. The keys documented are each KEY= written in bold,
    and each line of an example (.nf to .fi) that starts with KEY=."""
    parts, title, inside, example = {}, None, False, False
    for line in page.splitlines():
        if line.startswith('.\\"'):
            continue
        macro, _, rest = line.partition(" ") if line.startswith(".") else ("", "", line)
        if macro == ".SH":
            inside = " ".join(roff_arguments(rest)) == "SHIPPED HOOKS"
            continue
        if not inside:
            continue
        if macro == ".SS":
            title = "".join(text for _, text in roff_runs(" ".join(roff_arguments(rest)), "B"))
            continue
        example = {".nf": True, ".fi": False}.get(macro, example)
        if macro in (".B", ".I"):
            runs = roff_runs(" ".join(roff_arguments(rest)), macro[1])
        elif macro in ALTERNATING:
            runs = [run for n, argument in enumerate(roff_arguments(rest))
                    for run in roff_runs(argument, ALTERNATING[macro][n % 2])]
        elif macro:
            runs = []
        else:
            runs = roff_runs(line, "R")
        keys, text = parts.setdefault(title, (set(), []))
        plain = "".join(t for _, t in runs)
        text.append(plain)
        bold = "".join(t if font == "B" else "\0" for font, t in runs)
        keys.update(PAGE_KEY.findall(bold))
        starts = PAGE_KEY.match(plain) if example and not macro else None
        if starts:
            keys.add(starts.group(1))
    return {title: (keys, "\n".join(text)) for title, (keys, text) in parts.items()}


def settings_doc_problems(hooks: dict, page: str) -> list:
    """How the manual page's SHIPPED HOOKS and the hooks (name: script) differ: a
    hook without a subsection, a key a hook reads that its subsection does not
    document (KEY=), or its settings file not named there; a KEY= documented that
    the hook of its subsection (before the first subsection: any hook) does not
    read."""
    sections = shipped_hooks_section(page)
    if not sections:
        return ["uplinkd-hooks(7) has no section SHIPPED HOOKS"]
    problems, read = [], {}
    for name, script in sorted(hooks.items()):
        read[name], unknown = settings_read(script)
        problems += [f"{name}: cannot tell which key this reads: {call}" for call in unknown]
        if name not in sections:
            problems.append(f"SHIPPED HOOKS has no subsection (.SS) for {name}")
        keys, text = sections.get(name, (set(), ""))
        for key in sorted(read[name] - keys):
            problems.append(f"{name} reads {key} from its settings, but SHIPPED HOOKS has no {key}= under {name}")
        for path in SETTINGS_FILE.findall(script):
            if name in sections and path not in text:
                problems.append(f"{name} reads {path}, which SHIPPED HOOKS does not name under {name}")
    any_hook = set().union(*read.values()) if read else set()
    for title, (keys, _) in sections.items():
        known, readers = (read[title], f"{title} does not read") if title in read else (any_hook, "no shipped hook reads")
        for key in sorted(keys - known):
            where = f"under {title}" if title else "before the hooks' subsections"
            problems.append(f"SHIPPED HOOKS documents {key}= {where}, which {readers}")
    return problems


def shipped_scripts() -> dict:
    return {hook.name: hook.read_text() for hook in SHIPPED}


def test_the_manual_page_documents_every_hook_setting_and_no_other():
    """uplinkd-hooks(7), SHIPPED HOOKS, is the one reference of the shipped hooks'
    settings (hooks/README.md only points to it): every key each hook reads with
    conf_value is documented under that hook's subsection, with its settings file,
    and every KEY= documented there is one the hook reads. A pure file check."""
    scripts = shipped_scripts()
    read = {name: settings_read(script)[0] for name, script in scripts.items()}
    # The hooks were read right: a regular expression that found nothing would pass.
    assert {"CONNTRACK_FLUSH", "FAILBACK_FLUSH", "LOOSE_RP_FILTER", "PROTO"} <= read["50-route-failover"], read
    assert {"METHOD", "INTERFACES", "CREDENTIALS", "COMMAND", "USERNAME", "PASSWORD"} <= read["60-portal-login"], read
    assert {"EVENTS", "URL"} <= read["90-notify"], read
    page = HOOKS_PAGE.read_text()
    assert shipped_hooks_section(page)["50-route-failover"][0] >= {"CONNTRACK_FLUSH", "LOOSE_RP_FILTER"}
    assert settings_doc_problems(scripts, page) == []


def test_a_setting_the_manual_page_lacks_or_invents_is_reported():
    """The check on the real page and hooks, each changed one way: a hook reading a
    made-up key, a key's entry gone from the page, a key documented that no hook
    reads; and on a made-up page, which parts of roff count as documenting a key."""
    scripts, page = shipped_scripts(), HOOKS_PAGE.read_text()
    made_up = dict(scripts, **{"90-notify": scripts["90-notify"].replace(
        'url=$(conf_value "$CONF" URL http-url)',
        'extra=$(conf_value "$CONF" MADE_UP_KEY digits 1) || :\nurl=$(conf_value "$CONF" URL http-url)')})
    assert settings_doc_problems(made_up, page) == [
        "90-notify reads MADE_UP_KEY from its settings, but SHIPPED HOOKS has no MADE_UP_KEY= under 90-notify"]
    assert ".B LOOSE_RP_FILTER=yes\n" in page
    assert settings_doc_problems(scripts, page.replace(".B LOOSE_RP_FILTER=yes\n", ".B LOOSE_RP_FILTER\n")) == [
        "50-route-failover reads LOOSE_RP_FILTER from its settings, but SHIPPED HOOKS has no LOOSE_RP_FILTER= "
        "under 50-route-failover"]
    invented = page.replace(".B LOOSE_RP_FILTER=yes\n", ".B LOOSE_RP_FILTER=yes\n.TP\n.BI MADE_UP_KEY= N\n")
    assert settings_doc_problems(scripts, invented) == [
        "SHIPPED HOOKS documents MADE_UP_KEY= under 50-route-failover, which 50-route-failover does not read"]

    hooks = {
        "50-x": 'CONF=${X_CONF:-/etc/uplinkd/x.conf}\n'
                'a=$(conf_value "$CONF" KNOWN yes-no no) || :\n'
                '# b=$(conf_value "$CONF" IN_A_COMMENT)\n'
                'c=$(conf_value "$CONF" "$name")\n',
        "70-y": 'CONF=${Y_CONF:-/etc/uplinkd/y.conf}\nd=$(conf_value "${CONF}" OTHER)\n',
    }
    made = "\n".join([
        ".SH SHIPPED HOOKS",
        "Lines \\fBKEY\\fR=value, or",
        ".IB KEY = value",
        ".SS 50\\-x",
        "Settings in",
        ".IR /etc/uplinkd/z.conf :",
        ".TP",
        ".B KNOWN=yes\\fR|\\fPno",
        ".TP",
        ".BI STALE= N",
        "and \\fBIN_TEXT=\\fP, not \\fIITALIC=\\fP nor PLAIN=.",
        '.\\" .B IN_A_COMMENT=yes',
        ".nf",
        "IN_EXAMPLE=1",
        "# NOT_A_SETTING=1",
        ".fi",
        ".SS Other",
        ".B OTHER=1 ANYWHERE=2",
        ".SH EXAMPLES",
        ".B AFTER=1",
    ])
    assert settings_doc_problems(hooks, made) == [
        "50-x: cannot tell which key this reads: c=$(conf_value \"$CONF\" \"$name\")",
        "50-x reads /etc/uplinkd/x.conf, which SHIPPED HOOKS does not name under 50-x",
        "SHIPPED HOOKS has no subsection (.SS) for 70-y",
        "70-y reads OTHER from its settings, but SHIPPED HOOKS has no OTHER= under 70-y",
        "SHIPPED HOOKS documents IN_EXAMPLE= under 50-x, which 50-x does not read",
        "SHIPPED HOOKS documents IN_TEXT= under 50-x, which 50-x does not read",
        "SHIPPED HOOKS documents STALE= under 50-x, which 50-x does not read",
        "SHIPPED HOOKS documents ANYWHERE= under Other, which no shipped hook reads",
    ]
    assert settings_doc_problems(hooks, ".SH DESCRIPTION\n.B KNOWN=yes\n") == [
        "uplinkd-hooks(7) has no section SHIPPED HOOKS"]


def test_the_hooks_guide_is_installed_compressed_as_the_pages_name_it():
    """The pages name /usr/share/doc/uplinkd/hooks.md.gz; dh_compress compresses a
    document only when it is larger than 4 KiB."""
    assert (HOOKS / "README.md").stat().st_size > 4096, "hooks/README.md would be installed as hooks.md, not hooks.md.gz"
