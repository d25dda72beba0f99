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

modprobe -d "$RXEVM_MODROOT" -a virtio_net crc32_generic rdma_rxe ib_uverbs rdma_ucm ib_umad sch_netem ||
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

# netem goes on after the barrier so that heavy loss cannot stall it.
#
# --no-multicast: the segment carries no multicast at all, as on fabrics whose switches drop it:
# every frame to 224.0.0.0/4 is dropped on the netdev, both ways. Outgoing ones go to a band of
# their own whose netem loses them all: a qdisc that reports the drop (a tc "drop" action,
# netfilter) makes rxe retry the same work request for ever (the send looks transient to it), so
# the loss must look like netem's, a frame the wire ate. The rest goes to the other band, under
# --netem's arguments when given. Incoming ones are dropped at ingress (clsact). The kernel's own
# loopback copy of a guest's multicast to itself never reaches the netdev.
if [ "$RXEVM_NO_MULTICAST" = 1 ]; then
	modprobe -d "$RXEVM_MODROOT" -a sch_prio sch_ingress cls_u32 act_gact ||
		fail "modprobe of the tc modules failed"
	tc qdisc add dev "$netdev" root handle 1: prio bands 2 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 ||
		fail "tc: prio root on $netdev failed"
	tc qdisc add dev "$netdev" parent 1:1 handle 10: netem loss 100% ||
		fail "tc: the multicast band's netem failed"
	band=pfifo
	[ -n "$RXEVM_NETEM" ] && band="netem $RXEVM_NETEM"
	# shellcheck disable=SC2086 # qdisc arguments are words on purpose
	tc qdisc add dev "$netdev" parent 1:2 handle 20: $band || fail "tc: the other band's $band failed"
	tc filter add dev "$netdev" parent 1: protocol ip prio 1 u32 match ip dst 224.0.0.0/4 flowid 1:1 ||
		fail "tc filter steering 224.0.0.0/4 to the dropping band failed"
	tc qdisc add dev "$netdev" clsact || fail "tc qdisc add dev $netdev clsact failed"
	tc filter add dev "$netdev" ingress protocol ip u32 match ip dst 224.0.0.0/4 action drop ||
		fail "tc filter dropping incoming 224.0.0.0/4 failed"
elif [ -n "$RXEVM_NETEM" ]; then
	# shellcheck disable=SC2086 # netem arguments are words on purpose
	tc qdisc add dev "$netdev" root netem $RXEVM_NETEM || fail "tc qdisc add dev $netdev root netem $RXEVM_NETEM failed"
fi

# --rx-loss: this guest alone loses incoming UDP datagrams (RoCEv2's among them) at random, one in
# 100/PCT, as a receiver behind its own lossy link does; netem's loss is the sender's, common to
# every receiver of a multicast frame. Dropped at ingress, before rxe sees them.
if [ "${RXEVM_RX_LOSS:-0}" != 0 ]; then
	modprobe -d "$RXEVM_MODROOT" -a sch_ingress cls_u32 act_gact ||
		fail "modprobe of the tc modules failed"
	tc qdisc show dev "$netdev" | grep -q clsact || tc qdisc add dev "$netdev" clsact ||
		fail "tc qdisc add dev $netdev clsact failed"
	tc filter add dev "$netdev" ingress protocol ip prio 2 u32 match ip protocol 17 0xff \
		action gact ok random netrand drop $((100 / RXEVM_RX_LOSS)) ||
		fail "tc filter losing ${RXEVM_RX_LOSS} % of incoming UDP failed"
fi

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
