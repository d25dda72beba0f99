# SPDX-License-Identifier: BSD-2-Clause
"""rdps for Python: publish/subscribe over RDMA Unreliable Datagram queue pairs (librdps).

    import rdps
    with rdps.Context(device="loopback") as ctx:
        sub = ctx.subscriber("demo.hello", lambda data, info: print(data, info.seq))
        pub = ctx.publisher("demo.hello")
        pub.wait_ready()
        pub.send(b"hello")
        ctx.poll()

docs/python.md is the guide; rdps.h is the reference of every call underneath.
"""
from ._context import (Context, counter_descriptions, counter_names, read_domain_key,
                       topic_id)
from ._dispatch import Event, Message, MessageInfo, Source
from ._endpoints import SEND_MORE, Claim, Publisher, Subscriber
from ._errors import (CODES, Busy, Closed, InvalidArgument, MessageTooLong, NoDevice, NotOwner,
                      RdpsError, TimedOut, TryAgain)
from ._ffi import lib as _lib
from ._ffi import string as _string

__all__ = ["Context", "Publisher", "Subscriber", "Claim", "Message", "MessageInfo", "Event",
           "Source", "RdpsError", "TryAgain", "Closed", "NotOwner", "InvalidArgument",
           "MessageTooLong", "Busy", "NoDevice", "TimedOut", "SEND_MORE", "DOMAIN_KEY_BYTES",
           "topic_id", "read_domain_key", "counter_names", "counter_descriptions", "strerror",
           "err_name", "version", "__version__"]

DOMAIN_KEY_BYTES = _lib.RDPS_DOMAIN_KEY_BYTES
# The error codes as module constants: rdps.EAGAIN, rdps.ECLOSED, ...
globals().update(CODES)
__all__ += sorted(CODES)


def strerror(code):
    """rdps_strerror: the text of an error code."""
    return _string(_lib.rdps_strerror(code))


def err_name(code):
    """rdps_err_name: "RDPS_EAGAIN", ..."""
    return _string(_lib.rdps_err_name(code))


def version():
    """The loaded librdps's version ("1.3.0")."""
    return _string(_lib.rdps_version())


__version__ = version()
