# SPDX-License-Identifier: BSD-2-Clause
"""_ffi.py - the compiled half (_rdps_cffi: librdps's API and the collector) and checks that
the record layouts this package reads with struct match what the C compiler made."""
import struct

from ._rdps_cffi import ffi, lib

__all__ = ["ffi", "lib", "INFO_FORMAT", "EVENT_FORMAT", "INFO_SIZE", "EVENT_SIZE", "string"]

# struct pyrdps_info and struct pyrdps_event (collect.h), as Python's struct reads them.
INFO_FORMAT = struct.Struct("<QQIIIIiIHB16s")
EVENT_FORMAT = struct.Struct("<iiIIIIIIIHB16s")
INFO_SIZE = ffi.sizeof("struct pyrdps_info")
EVENT_SIZE = ffi.sizeof("struct pyrdps_event")


def _check_layout(ctype, fmt, fields):
    offset = 0
    for name, code in zip(fields, fmt.format.lstrip("<").replace("16s", "s")):
        if ffi.offsetof(ctype, name) != offset:
            raise ImportError("rdps: %s.%s is at %d, this package reads it at %d"
                              % (ctype, name, ffi.offsetof(ctype, name), offset))
        offset += 16 if code == "s" else struct.calcsize("<" + code)
    if fmt.size > ffi.sizeof(ctype):
        raise ImportError("rdps: %s is smaller than this package reads" % ctype)


_check_layout("struct pyrdps_info", INFO_FORMAT,
              ["topic_id", "publisher_ts_ns", "session_id", "seq", "ordinal", "fragments",
               "retransmitted", "qpn", "lid", "has_gid", "gid"])
_check_layout("struct pyrdps_event", EVENT_FORMAT,
              ["type", "reason", "session_id", "first_seq", "count", "receiver_id",
               "first_ordinal", "msg_count", "qpn", "lid", "has_gid", "gid"])


def string(ptr):
    """A C string from librdps (never NULL there) as str."""
    return ffi.string(ptr).decode("utf-8", "replace")
