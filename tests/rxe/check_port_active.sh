#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rxe-guest test: the guest's rxe port is ACTIVE, RoCE (Ethernet link layer), with the active MTU its netdev allows.
# Exits 77 (skipped) outside an rxe-vm guest or when the device is missing.
dev=${RDPS_VM_DEV:-}
if [ -z "$dev" ] || [ ! -d "/sys/class/infiniband/$dev" ]; then
	echo "check_port_active: no rxe-vm device (RDPS_VM_DEV='$dev'): skipped"
	exit 77
fi
command -v ibv_devinfo >/dev/null 2>&1 || {
	echo "check_port_active: ibv_devinfo not installed (Debian package ibverbs-utils): skipped"
	exit 77
}
info=$(ibv_devinfo -d "$dev" -i 1) || {
	echo "check_port_active: ibv_devinfo -d $dev failed"
	exit 1
}
echo "$info"

# rxe picks the largest IB MTU that fits the netdev MTU with the RoCEv2 headers (1500 -> 1024, 4200 -> 4096).
netdev_mtu=$(cat "/sys/class/net/${RDPS_VM_NETDEV:-eth0}/mtu" 2>/dev/null || echo 1500)
expect=256
for m in 512 1024 2048 4096; do
	[ $((m + 100)) -le "$netdev_mtu" ] && expect=$m
done

fail=0
echo "$info" | grep -Eq 'state:[[:space:]]+PORT_ACTIVE' || {
	echo "FAIL: port 1 of $dev is not PORT_ACTIVE"
	fail=1
}
echo "$info" | grep -Eq 'link_layer:[[:space:]]+Ethernet' || {
	echo "FAIL: link layer of $dev is not Ethernet"
	fail=1
}
echo "$info" | grep -Eq "active_mtu:[[:space:]]+$expect " || {
	echo "FAIL: active_mtu of $dev is not $expect (netdev MTU $netdev_mtu)"
	fail=1
}
[ "$fail" = 0 ] && echo "check_port_active: $dev PORT_ACTIVE, Ethernet, active_mtu $expect: ok"
exit "$fail"
