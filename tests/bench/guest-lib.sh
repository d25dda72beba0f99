# SPDX-License-Identifier: BSD-2-Clause
# guest-lib.sh - helpers the perftest comparison scripts share inside an rxe guest (sourced by bash).
# shellcheck shell=bash

# roce_v2_gid_index DEV: the RoCE v2 IPv4-mapped GID index of port 1 (what rdps picks and
# what perftest needs with -x), 0 when there is none.
roce_v2_gid_index() {
	local t i gid
	for t in /sys/class/infiniband/"$1"/ports/1/gid_attrs/types/*; do
		i=${t##*/}
		gid=$(cat /sys/class/infiniband/"$1"/ports/1/gids/"$i" 2>/dev/null) || continue
		if [ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] && [[ $gid == 0000:0000:0000:0000:0000:ffff:* ]]; then
			echo "$i"
			return
		fi
	done
	echo 0
}

field() { # field SIZE N: field N of perftest's first results row (the line starting with SIZE)
	awk -v s="$1" -v f="$2" '$1 == s && NF >= f { print $f; exit }'
}

json() { # json KEY FILE: a numeric field of an rdps tool's one-line JSON summary
	sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p" "$2" | head -1
}
