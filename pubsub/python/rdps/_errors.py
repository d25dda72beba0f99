# SPDX-License-Identifier: BSD-2-Clause
"""_errors.py - rdps error codes as Python exceptions: RdpsError carries the code, its name,
rdps_strerror's text and rdps_last_error_message's detail of the failed call."""
from ._ffi import ffi, lib, string

# Every code of RDPS_ERROR_MAP, by name ("EAGAIN": -11, ...).
CODES = {name: getattr(lib, "RDPS_" + name)
         for name in ffi.string(lib.PYRDPS_ERROR_NAMES).decode().split()}


class RdpsError(Exception):
    """A failed rdps call. code: the negative rdps code (rdps.EAGAIN, ...); name: "RDPS_EAGAIN";
    strerror: the code's text; detail: rdps_last_error_message() of the call (may be "")."""

    def __init__(self, code, detail="", call=""):
        self.code = code
        self.name = string(lib.rdps_err_name(code))
        self.strerror = string(lib.rdps_strerror(code))
        self.detail = detail
        self.call = call
        super().__init__(code, detail or self.strerror)

    def __str__(self):
        text = self.detail or ("%s: %s" % (self.call, self.strerror) if self.call
                               else self.strerror)
        return "%s (%s)" % (text, self.name)


class TryAgain(RdpsError, BlockingIOError):
    """RDPS_EAGAIN: back-pressure or not ready yet; nothing was sent: poll and retry."""


class Closed(RdpsError):
    """RDPS_ECLOSED: the handle (or its context) is closed."""


class NotOwner(RdpsError):
    """RDPS_ENOTOWNER: another thread owns the context (rdps(7), THREADS)."""


class InvalidArgument(RdpsError, ValueError):
    """RDPS_EINVAL: a bad argument (a topic name, an option, a handle of another type)."""


class MessageTooLong(RdpsError, ValueError):
    """RDPS_EMSGSIZE: longer than the publisher (or the claim) takes."""


class Busy(RdpsError):
    """RDPS_EBUSY: a claim is outstanding, or the call came from inside a callback."""


class NoDevice(RdpsError):
    """RDPS_ENODEV: no such RDMA device or port (device="loopback" runs without one)."""


class TimedOut(RdpsError, TimeoutError):
    """RDPS_ETIMEDOUT."""


_CLASSES = {
    CODES["EAGAIN"]: TryAgain,
    CODES["ECLOSED"]: Closed,
    CODES["ENOTOWNER"]: NotOwner,
    CODES["EINVAL"]: InvalidArgument,
    CODES["EMSGSIZE"]: MessageTooLong,
    CODES["EBUSY"]: Busy,
    CODES["ENODEV"]: NoDevice,
    CODES["ETIMEDOUT"]: TimedOut,
}


def error(code, call=""):
    """The exception for `code`, with this thread's rdps_last_error_message() (read at once: the
    next rdps call replaces it)."""
    detail = string(lib.rdps_last_error_message())
    return _CLASSES.get(code, RdpsError)(code, detail, call)


def check(code, call=""):
    """Returns a non-negative rdps result; raises the error a negative one means."""
    if code < 0:
        raise error(code, call)
    return code
