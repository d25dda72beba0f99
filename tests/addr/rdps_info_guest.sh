#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rdps_info_guest.sh - rxe-guest check of rdps-info: valid JSON, ACTIVE Ethernet port, MTU 1024, GID types, no-SA line, errors.
INFO=${1:?usage: rdps_info_guest.sh PATH/TO/rdps-info}
fails=0
passes=0
check() { # check DESCRIPTION COMMAND...
	desc=$1
	shift
	if "$@"; then
		echo "ok: $desc"
		passes=$((passes + 1))
	else
		echo "FAIL: $desc"
		fails=$((fails + 1))
	fi
}

if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	echo "skip: no RDMA device (run inside tools/rxe-vm)"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

"$INFO" >"$tmp/text" 2>"$tmp/text.err"
check "rdps-info exits 0" test $? -eq 0
cat "$tmp/text"
check "text shows PORT_ACTIVE" grep -q "state PORT_ACTIVE (ACTIVE)" "$tmp/text"
check "text shows the Ethernet link layer" grep -q "link layer Ethernet" "$tmp/text"
check "text shows MTU 1024 active" grep -q "MTU 1024 active" "$tmp/text"
check "text shows a RoCE v2 GID" grep -q "RoCE v2" "$tmp/text"
check "text says there is no SA on Ethernet" grep -q "no SA on Ethernet link layer" "$tmp/text"

"$INFO" --json --group 239.192.1.2 >"$tmp/json" 2>"$tmp/json.err"
check "rdps-info --json exits 0" test $? -eq 0
check "--json output is valid JSON (python3 -m json.tool)" \
	sh -c "python3 -m json.tool <'$tmp/json' >/dev/null"
# Field-level checks on the parsed document.
python3 - "$tmp/json" "${RDPS_VM_DEV:-}" "${RDPS_VM_NETDEV:-}" >"$tmp/fields" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
want_dev, want_netdev = sys.argv[2], sys.argv[3]
devs = doc["devices"]
dev = next((d for d in devs if d["name"] == want_dev), devs[0]) if want_dev else devs[0]
port = dev["ports"][0]
bad = []
def need(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        bad.append(what)
need(port["state"] == "PORT_ACTIVE", "json port state PORT_ACTIVE (%s)" % port["state"])
need(port["link_layer"] == "Ethernet", "json link_layer Ethernet (%s)" % port["link_layer"])
need(port["active_mtu"] == 1024, "json active_mtu 1024 (%s)" % port["active_mtu"])
types = sorted({g["type"] for g in port["gids"]})
need("RoCE v2" in types, "json GID types include RoCE v2 (%s)" % ", ".join(types))
if want_netdev:
    need(any(g["netdev"] == want_netdev for g in port["gids"]),
         "json GIDs name netdev %s" % want_netdev)
need(port["sa"]["available"] is False and "no SA on Ethernet" in port["sa"]["reason"],
     "json sa.available false with the no-SA reason")
need(port["sa"].get("roce_mgid") == "::ffff:239.192.1.2", "json RoCE MGID of the group")
sys.exit(1 if bad else 0)
PY
status=$?
cat "$tmp/fields"
check "JSON fields as expected" test $status -eq 0

"$INFO" -d no_such_dev >/dev/null 2>"$tmp/err"
status=$?
check "unknown device exits 1 with a clear message" \
	sh -c "test $status -eq 1 && grep -q \"no RDMA device named 'no_such_dev'\" '$tmp/err'"
"$INFO" --bogus >/dev/null 2>&1
check "bad option exits 2" test $? -eq 2
"$INFO" --group 10.0.0.1 >/dev/null 2>&1
check "non-multicast --group exits 2" test $? -eq 2
"$INFO" --help | grep -q "Usage: rdps-info"
check "--help prints usage" test $? -eq 0

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
