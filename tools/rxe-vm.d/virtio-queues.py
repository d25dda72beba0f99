#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# virtio-queues.py - a running rxe-vm guest's virtio-net queues, read over its QMP socket.
#
# Usage: tools/rxe-vm.d/virtio-queues.py RUN_DIR/qmp-I.sock [...]
# Prints, per guest, the netdev QEMU joined to the NIC and the state of queue 0 (receive) and
# queue 1 (transmit): a transmit queue whose shadow-avail-idx runs ahead of last-avail-idx for
# good holds frames the guest gave QEMU and QEMU never took (see docs/rxe-vm.md).
import json
import socket
import sys


class Qmp:
    """One QMP session: the greeting and capabilities once, then a reply per command."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.f = self.sock.makefile("rw")
        self.f.readline()  # greeting
        self.ask("qmp_capabilities")

    def ask(self, command, **arguments):
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.f.write(json.dumps(msg) + "\n")
        self.f.flush()
        while True:
            r = json.loads(self.f.readline())
            if "event" not in r:
                return r.get("return", r)

    def close(self):
        self.f.close()
        self.sock.close()


def show(path):
    """Prints the netdev and the virtio-net queues of the guest behind QMP socket path."""
    q = Qmp(path)
    try:
        print(q.ask("human-monitor-command", **{"command-line": "info network"}).strip())
        for dev in q.ask("x-query-virtio"):
            if dev.get("name") != "virtio-net":
                continue
            for queue in (0, 1):
                st = q.ask("x-query-virtio-queue-status", path=dev["path"], queue=queue)
                if "error" in st:
                    print(f"  {st['error']}")
                    continue
                name = {0: "receive", 1: "transmit"}[queue]
                print(f"  queue {queue} ({name}): last-avail-idx {st['last-avail-idx']} "
                      f"shadow-avail-idx {st['shadow-avail-idx']} used-idx {st['used-idx']} "
                      f"signalled-used {st['signalled-used']} inuse {st['inuse']}")
    finally:
        q.close()


def main():
    usage = "usage: virtio-queues.py RUN_DIR/qmp-I.sock [...]"
    if len(sys.argv) >= 2 and sys.argv[1] in ("-h", "--help"):
        print(usage)
        return 0
    if len(sys.argv) < 2:
        print(usage, file=sys.stderr)
        return 2
    for path in sys.argv[1:]:
        print(f"== {path}")
        try:
            show(path)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            print(f"virtio-queues: {path}: {e} (is the guest running?)", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
