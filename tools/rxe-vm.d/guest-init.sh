#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rxe-vm guest stage 2 (PID 1 inside the chroot on the host root): writable shares, rxe device, barrier, then CMD.
# Usage (from the initramfs): guest-init.sh RUN_DIR INDEX. Everything else comes from RUN_DIR/guest-INDEX.env.
run=$1
index=$2
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
status_file="$run/status-$index"

say() { echo "rxe-vm(guest$index): $*"; }

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	# PID 1 must never exit (that would panic); wait for the power-off to land.
	# Once the 9p root is gone `sleep` cannot even be started: stay quiet then.
	while :; do sleep 1 2>/dev/null; done
}

# A setup failure is reported on the console (the host shows it) and leaves no status file.
fail() {
	say "setup failed: $*"
	poweroff_now
}

# shellcheck source=/dev/null # written by tools/rxe-vm for this run
. "$run/guest-$index.env" || fail "cannot read $run/guest-$index.env"
if [ "$RXEVM_TRACE" = 1 ]; then
	PS4='+ $(cut -d" " -f1 /proc/uptime) '
	set -x
fi

for d in /tmp /run /var/tmp /dev/shm /root; do
	mkdir -p "$d" 2>/dev/null
	mount -t tmpfs -o mode=1777 tmpfs "$d" || fail "cannot mount tmpfs on $d"
done
chmod 700 /root
mkdir -p /dev/pts
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts || fail "cannot mount devpts"
dmesg -n 1

# Writable shares (run dir, repo, working directory) at the same paths as on the host.
k=0
while [ "$k" -lt "$RXEVM_SHARE_COUNT" ]; do
	p=''
	eval "p=\$RXEVM_SHARE_$k"
	mkdir -p "$p" 2>/dev/null
	mount -t 9p -o "trans=virtio,version=9p2000.L,msize=$RXEVM_MSIZE,cache=mmap" "share$k" "$p" ||
		fail "cannot mount writable share $p"
	k=$((k + 1))
done

# The tc modules too: shape-net.sh impairs the segment at boot and per scenario of a bundle.
modprobe -d "$RXEVM_MODROOT" -a virtio_net crc32_generic rdma_rxe ib_uverbs rdma_ucm ib_umad sch_netem \
	sch_prio sch_ingress cls_u32 act_gact ||
	fail "modprobe -d $RXEVM_MODROOT failed"

hostname "rxe-vm$index"
ip link set lo up
netdev=
for n in /sys/class/net/*; do
	n=${n##*/}
	[ "$n" = lo ] || { netdev=$n; break; }
done
[ -n "$netdev" ] || fail "no network device"
ip link set "$netdev" mtu "$RXEVM_MTU" || fail "cannot set MTU $RXEVM_MTU on $netdev"
ip link set "$netdev" up || fail "cannot bring $netdev up"

# rxe first, address second: a peer that answers ping already has an ACTIVE rxe port.
dev=rxe0
rdma link add "$dev" type rxe netdev "$netdev" || fail "rdma link add $dev type rxe netdev $netdev failed"
state_file="/sys/class/infiniband/$dev/ports/1/state"
tries=0
until grep -q ACTIVE "$state_file" 2>/dev/null; do
	tries=$((tries + 1))
	[ "$tries" -le 300 ] || fail "$dev port 1 not ACTIVE after 30 s: $(cat "$state_file" 2>/dev/null)"
	sleep 0.1
done
ip addr add "$RDPS_VM_IP/24" dev "$netdev" || fail "cannot add $RDPS_VM_IP to $netdev"
ip route add 224.0.0.0/4 dev "$netdev" || fail "cannot add the multicast route"

# Barrier: every peer answers ping (so its kernel, address and rxe port are up).
start=$(cut -d. -f1 /proc/uptime)
for peer in $RDPS_VM_IPS; do
	[ "$peer" = "$RDPS_VM_IP" ] && continue
	until ping -c 1 -W 1 "$peer" >/dev/null 2>&1; do
		now=$(cut -d. -f1 /proc/uptime)
		[ $((now - start)) -lt "$RXEVM_BARRIER_TIMEOUT" ] ||
			fail "peer $peer did not answer ping within $RXEVM_BARRIER_TIMEOUT s"
		sleep 0.2
	done
done

# The segment's impairments (--netem, --no-multicast, --rx-loss) go on after the barrier so that
# heavy loss cannot stall it; tools/rxe-vm.d/shape-net.sh sets them (and a bundle's scenarios,
# tests/rxe/bundle_runner.sh, set their own the same way).
"${RXEVM_GUEST_INIT%/*}/shape-net.sh" "$netdev" set "$RXEVM_NETEM" "$RXEVM_NO_MULTICAST" "${RXEVM_RX_LOSS:-0}" ||
	fail "the segment's impairments could not be set"

export RDPS_VM_NETDEV="$netdev" RDPS_VM_DEV="$dev" HOME=/root TERM=dumb
for v in $RXEVM_EXPORTS; do
	# shellcheck disable=SC2163 # v holds the name of the variable to export
	export "$v"
done
cd "$RXEVM_CWD" || fail "cannot cd to $RXEVM_CWD"
echo "@@RXE-VM-CMD-START@@"
sh -c "$RXEVM_CMD" </dev/null 2>&1
rc=$?
echo "@@RXE-VM-CMD-END@@ $rc"
echo "$rc" >"$status_file.tmp" && mv "$status_file.tmp" "$status_file"
poweroff_now
