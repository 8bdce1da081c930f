"""Shared fixtures for the uplinkd network-namespace integration tests."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import failoverlab  # noqa: E402
import lab as labmod  # noqa: E402
import modemrig  # noqa: E402
from agentrun import AgentError, AgentRun, config_text  # noqa: E402
from pytesthelp import skip_or_fail  # noqa: E402

uplinkd_path = labmod.uplinkd_path


_reason_cache = []


def netns_unavailable_reason():
    if not _reason_cache:
        _reason_cache.append(labmod.unavailable_reason())
    return _reason_cache[0]


def pytest_report_header(config):
    reason = netns_unavailable_reason()
    binary = uplinkd_path()
    lines = [f"uplinkd binary: {binary} ({'present' if binary.is_file() else 'MISSING: run swift build'})",
             "netns lab: " + ("available" if reason is None else f"UNAVAILABLE, tests will be skipped: {reason}")]
    if Path("/etc/uplinkd/uplinkd.conf").exists():
        lines.append("WARNING: /etc/uplinkd/uplinkd.conf exists; tests assume built-in defaults")
    return lines


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """item.rep_setup / rep_call / rep_teardown: lets a fixture see at teardown
    whether its test failed (test_modemrig.py prints the rig's logs then)."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture(scope="session")
def netns_ok():
    reason = netns_unavailable_reason()
    if reason is not None:
        if os.environ.get("UPLINKD_REQUIRE_LAB"):
            # CI runs as root: there a missing lab is a failure, never a quiet skip.
            pytest.fail(f"UPLINKD_REQUIRE_LAB is set but the netns lab is unavailable: {reason}")
        print(f"\nSKIPPING uplinkd netns tests: {reason}", file=sys.stderr)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def failover_ok(netns_ok):
    """The failover lab's tools (dnsmasq, nft) are there, or skip (fail in CI)."""
    reason = failoverlab.unavailable_reason()
    if reason is not None:
        skip_or_fail(reason, "the failover lab")


def lab_fixture(name, lab_class, available, scope, doc):
    """A fixture `name` that builds a lab_class() once the fixture `available`
    (netns_ok, failover_ok: skip or fail when the lab cannot run) has passed,
    yields it, and destroys it at the end of `scope`."""
    def fixture(request):
        request.getfixturevalue(available)
        with lab_class() as lb:
            yield lb
    fixture.__doc__ = doc
    return pytest.fixture(fixture, scope=scope, name=name)


flab = lab_fixture("flab", failoverlab.FailoverLab, "failover_ok", "module",
                   """One failover lab (failoverlab.py) shared by a module's tests that leave
                   it as they found it (cuts are restored, LAN clients stopped).""")
fresh_flab = lab_fixture("fresh_flab", failoverlab.FailoverLab, "failover_ok", "function",
                         "A private failover lab.")
lab = lab_fixture("lab", labmod.Lab, "netns_ok", "module",
                  "One lab shared by the non-destructive tests of a module.")
fresh_lab = lab_fixture("fresh_lab", labmod.Lab, "netns_ok", "function",
                        "A private lab for tests that break links, addresses or routes.")


@pytest.fixture
def serve():
    """serve(lab, role, mode, log=None) -> LabServer; all stopped at teardown."""
    started = []

    def start(lb, role, mode, log=None):
        srv = lb.serve(role, mode, log)
        started.append((lb, srv))
        return srv

    yield start
    for lb, srv in reversed(started):
        lb.stop_server(srv)


@pytest.fixture
def blackhole():
    """blackhole(lab, role='dead'): drop everything to 203.0.113.80; undone at teardown."""
    done = []

    def apply(lb, role="dead"):
        lb.blackhole(role)
        done.append((lb, role))

    yield apply
    for lb, role in reversed(done):
        lb.unblackhole(role)


@pytest.fixture
def agent(tmp_path):
    """agent(lab, config=None, hooks=None, name='agent', **kw) -> a started AgentRun:
    `uplinkd run` in the lab's gw namespace with `config` (default
    agentrun.config_text(): lab probes only), the recording hook 10-record plus
    `hooks` ({name: body} or {name: (body, mode)}), its files in tmp_path/name;
    kw go to AgentRun (binary=, record=, verbose=). Every run is closed at teardown;
    a missing binary is one clean failure."""
    started = []

    def start(lb, config=None, hooks=None, name="agent", **kw):
        try:
            run = AgentRun(lb, tmp_path / name, config or config_text(), hooks=hooks, **kw)
        except AgentError as exc:
            msg = str(exc)
        else:
            started.append(run)
            return run.start()
        pytest.fail(msg, pytrace=False)

    yield start
    for run in started:
        run.close()


@pytest.fixture(scope="session")
def rig_ok(netns_ok):
    """The modem rig's programs (ModemManager, dbus-daemon, dbusmock) are there, or skip
    (fail in CI)."""
    reason = modemrig.unavailable_reason()
    if reason is not None:
        skip_or_fail(reason, "the modem rig")
