#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# history-merge-rxe.sh - replay-merge at full size on three rxe guests under netem loss 5 %:
# a late subscriber (rdsub --history --verify) joins about 1 000 000 messages back while the
# publisher keeps sending, and must see every message exactly once and in order across the seam
# (tests/pubsub/late_join_role.sh, its history round; CI runs the same round smaller in
# pubsub_late_join_three_guests). Prints each guest's figures and the round's time.
#
# usage: history-merge-rxe.sh BUILD_DIR [COUNT RATE JOIN_S]
#   default 1250000 6000 190: 6000/s offered (the publisher reached 5500-6400/s under this
#   loss), the late subscriber 190 s in, about 1 050 000-1 140 000 messages back
set -u
build=$(cd "${1:?usage: history-merge-rxe.sh BUILD_DIR [COUNT RATE JOIN_S]}" && pwd)
count=${2:-1250000} rate=${3:-6000} join=${4:-190}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
role="$here/../pubsub/late_join_role.sh $build history:$count:$rate:$join"
exec "$here/../../tools/rxe-vm" exec --timeout $((count / rate + join + 400)) \
    --host "$role" --host "$role" --host "$role"
