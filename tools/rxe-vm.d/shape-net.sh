#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# shape-net.sh - a guest's impaired segment (netem, no multicast, its own ingress loss), set at boot by guest-init.sh and per scenario by tests/rxe/bundle_runner.sh.
#
# usage (inside a guest, as root):
#   shape-net.sh NETDEV set NETEM_ARGS NO_MULTICAST RX_LOSS_PCT   ("" / 0 / 0 for none)
#   shape-net.sh NETDEV clear
# The tc modules must be loaded (guest-init.sh loads them at boot). Exits non-zero with one line
# on stderr when tc refuses a step.
set -u
netdev=${1:?usage: shape-net.sh NETDEV set|clear ...}
what=${2:?usage: shape-net.sh NETDEV set|clear ...}

fail() {
	echo "shape-net.sh: $*" >&2
	exit 1
}

if [ "$what" = clear ]; then
	tc qdisc del dev "$netdev" root 2>/dev/null
	tc qdisc del dev "$netdev" clsact 2>/dev/null
	exit 0
fi
[ "$what" = set ] || fail "unknown action '$what' (set or clear)"
netem=${3:-}
no_multicast=${4:-0}
rx_loss=${5:-0}

# No multicast: the segment carries none at all, as on fabrics whose switches drop it: every frame
# to 224.0.0.0/4 is dropped on the netdev, both ways. Outgoing ones go to a band of their own whose
# netem loses them all: a qdisc that reports the drop (a tc "drop" action, netfilter) makes rxe
# retry the same work request for ever (the send looks transient to it), so the loss must look
# like netem's, a frame the wire ate. The rest goes to the other band, under the netem arguments
# when given. Incoming ones are dropped at ingress (clsact). The kernel's own loopback copy of a
# guest's multicast to itself never reaches the netdev.
if [ "$no_multicast" = 1 ]; then
	tc qdisc add dev "$netdev" root handle 1: prio bands 2 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 ||
		fail "tc: prio root on $netdev failed"
	tc qdisc add dev "$netdev" parent 1:1 handle 10: netem loss 100% ||
		fail "tc: the multicast band's netem failed"
	band=pfifo
	[ -n "$netem" ] && band="netem $netem"
	# shellcheck disable=SC2086 # qdisc arguments are words on purpose
	tc qdisc add dev "$netdev" parent 1:2 handle 20: $band || fail "tc: the other band's $band failed"
	tc filter add dev "$netdev" parent 1: protocol ip prio 1 u32 match ip dst 224.0.0.0/4 flowid 1:1 ||
		fail "tc filter steering 224.0.0.0/4 to the dropping band failed"
	tc qdisc add dev "$netdev" clsact || fail "tc qdisc add dev $netdev clsact failed"
	tc filter add dev "$netdev" ingress protocol ip u32 match ip dst 224.0.0.0/4 action drop ||
		fail "tc filter dropping incoming 224.0.0.0/4 failed"
elif [ -n "$netem" ]; then
	# shellcheck disable=SC2086 # netem arguments are words on purpose
	tc qdisc add dev "$netdev" root netem $netem || fail "tc qdisc add dev $netdev root netem $netem failed"
fi

# Ingress loss: this guest alone loses incoming UDP datagrams (RoCEv2's among them) at random, one
# in 100/PCT, as a receiver behind its own lossy link does; netem's loss is the sender's, common to
# every receiver of a multicast frame. Dropped at ingress, before rxe sees them.
if [ "$rx_loss" != 0 ]; then
	tc qdisc show dev "$netdev" | grep -q clsact || tc qdisc add dev "$netdev" clsact ||
		fail "tc qdisc add dev $netdev clsact failed"
	tc filter add dev "$netdev" ingress protocol ip prio 2 u32 match ip protocol 17 0xff \
		action gact ok random netrand drop $((100 / rx_loss)) ||
		fail "tc filter losing $rx_loss % of incoming UDP failed"
fi
exit 0
