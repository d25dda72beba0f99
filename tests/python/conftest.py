# SPDX-License-Identifier: BSD-2-Clause
"""conftest.py - fixtures of the rdps Python tests: contexts on the loopback device (one fabric
per process: every context of the test process reaches the others)."""
import itertools

import pytest

import rdps

_names = itertools.count()


@pytest.fixture
def ctx():
    with rdps.Context(device="loopback", announce_interval_ms=50) as c:
        yield c


@pytest.fixture
def topic():
    """A topic name no other test uses (contexts of one process share the loopback fabric)."""
    return "test.py.%d" % next(_names)


def ready(*endpoints, timeout=10.0):
    for e in endpoints:
        e.wait_ready(timeout)
