"""Small pytest helpers shared by the namespace test modules: a missing binary or
an agent that does not do what was awaited becomes one clean failure message."""

import os
import sys

import pytest

import agentrun
from agentrun import AgentError


def require_binary():
    try:
        return agentrun.require_binary()
    except AgentError as exc:
        pytest.fail(str(exc), pytrace=False)


def ok(fn, *args, **kw):
    """Call an AgentRun waiter; its AgentError becomes a clean test failure."""
    try:
        return fn(*args, **kw)
    except AgentError as exc:
        msg = str(exc)
    pytest.fail(msg, pytrace=False)


def fail(run, msg):
    pytest.fail(f"{msg}\n{run.transcript()}", pytrace=False)


def skip_or_fail(reason, what="the netns lab"):
    """Skip with the reason printed; in CI (UPLINKD_REQUIRE_LAB) fail instead."""
    if os.environ.get("UPLINKD_REQUIRE_LAB"):
        pytest.fail(f"UPLINKD_REQUIRE_LAB is set but {what} is unavailable: {reason}")
    print(f"\nSKIPPING tests needing {what}: {reason}", file=sys.stderr)
    pytest.skip(reason)
