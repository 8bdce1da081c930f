"""Small pytest helpers shared by the namespace test modules: a missing binary or
an agent that does not do what was awaited becomes one clean failure message."""

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
