#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# history-merge-rxe.sh - replay-merge at full size on three rxe guests under netem loss 5 %:
# a late subscriber (rdsub --history --verify) joins about 1 000 000 messages back while the
# publisher keeps sending, and must see every message exactly once and in order across the seam
# (tests/pubsub/late_join_role.sh, its history round; CI runs the same round smaller in
# pubsub_late_join_three_guests). Prints each guest's figures and the round's time.
#
# usage: history-merge-rxe.sh BUILD_DIR [COUNT RATE JOIN FLOW]
#   default 1100000 3000 1000000m min: the late subscriber starts once 1 000 000 messages were
#   published; flow control min, so that the recorder, on an emulated CPU that also serves the
#   replay, holds the publisher instead of falling behind its ring (with max at 6 000/s offered
#   it recorded 2 000 messages/s, lagged and lost: docs/replay-merge.md)
set -u
build=$(cd "${1:?usage: history-merge-rxe.sh BUILD_DIR [COUNT RATE JOIN FLOW]}" && pwd)
count=${2:-1100000} rate=${3:-3000} join=${4:-1000000m} flow=${5:-min}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
role="$here/../pubsub/late_join_role.sh $build history:$count:$rate:$join:$flow"
exec "$here/../../tools/rxe-vm" exec --timeout $((count * 2 / rate + 900)) \
    --host "$role" --host "$role" --host "$role"
