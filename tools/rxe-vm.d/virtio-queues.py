#!/usr/bin/env python3
# virtio-queues.py - a running rxe-vm guest's virtio-net queues, read over its QMP socket.
#
# Usage: tools/rxe-vm.d/virtio-queues.py RUN_DIR/qmp-I.sock [...]
# Prints, per guest, the netdev QEMU joined to the NIC and the state of queue 0 (receive) and
# queue 1 (transmit): a transmit queue whose shadow-avail-idx runs ahead of last-avail-idx for
# good holds frames the guest gave QEMU and QEMU never took (see README, tools/rxe-vm).
import json
import socket
import sys


def qmp(path, commands):
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(path)
        f = s.makefile("rw")
        f.readline()  # greeting
        replies = []
        for c in [{"execute": "qmp_capabilities"}] + commands:
            f.write(json.dumps(c) + "\n")
            f.flush()
            while True:
                r = json.loads(f.readline())
                if "event" not in r:
                    replies.append(r)
                    break
        return replies[1:]


def show(path):
    """Prints the netdev and the virtio-net queues of the guest behind QMP socket path."""
    devices = qmp(path, [{"execute": "x-query-virtio"}])[0].get("return", [])
    nics = [d["path"] for d in devices if d.get("name") == "virtio-net"]
    cmds = [{"execute": "human-monitor-command", "arguments": {"command-line": "info network"}}]
    for nic in nics:
        for queue in (0, 1):
            cmds.append({"execute": "x-query-virtio-queue-status",
                         "arguments": {"path": nic, "queue": queue}})
    replies = qmp(path, cmds)
    print(replies[0].get("return", replies[0]).strip())
    for r in replies[1:]:
        q = r.get("return", r)
        if "error" in q:
            print(f"  {q['error']}")
            continue
        name = {0: "receive", 1: "transmit"}.get(q["queue-index"], "?")
        print(f"  queue {q['queue-index']} ({name}): last-avail-idx {q['last-avail-idx']} "
              f"shadow-avail-idx {q['shadow-avail-idx']} used-idx {q['used-idx']} "
              f"signalled-used {q['signalled-used']} inuse {q['inuse']}")


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: virtio-queues.py RUN_DIR/qmp-I.sock [...]", file=sys.stderr)
        return 2
    for path in sys.argv[1:]:
        print(f"== {path}")
        try:
            show(path)
        except (OSError, ValueError, KeyError, IndexError) as e:
            print(f"virtio-queues: {path}: {e} (is the guest running?)", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
