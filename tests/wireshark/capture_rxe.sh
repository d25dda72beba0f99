#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# capture_rxe.sh - the Wireshark dissector on real traffic: two rxe guests run a reliable
# rdpub/rdsub pair, then an unpaced unreliable one that batches, while guest 0 captures its
# netdev (capture_role.sh); the host then decodes the capture with tshark and
# tools/wireshark/rdps.lua and compares it with the tools' --json (check_capture.py).
#
# usage: capture_rxe.sh BUILD_DIR FRAME_VERDICT OUT_DIR [COUNT [SIZE_RANGE [BATCH_COUNT
#                       [BATCH_SIZE_RANGE]]]]
# Exit 0 match, 1 mismatch or failed run, 77 tshark missing on the host.
# tests/wireshark/rxe_rdps.pcap was made with COUNT 8, BATCH_COUNT 60 (the defaults otherwise).
set -u
usage="usage: capture_rxe.sh BUILD_DIR FRAME_VERDICT OUT_DIR [COUNT [SIZE_RANGE [BATCH_COUNT [BATCH_SIZE_RANGE]]]]"
build=${1:?$usage}
verdict=${2:?$usage} out=${3:?$usage} count=${4:-30} sizes=${5:-1:700} batch_count=${6:-200}
batch_sizes=${7:-1:300}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
command -v tshark >/dev/null || { echo "tshark not installed (Debian: tshark): skipped"; exit 77; }
rm -rf "$out"
mkdir -p "$out"
# MTU 576: rxe's active MTU is 256, so messages of a few hundred bytes take several fragments
# and the capture stays small.
role="$here/capture_role.sh $build $out $count $sizes $batch_count $batch_sizes"
"$repo/tools/rxe-vm" exec --mtu 576 --timeout 240 --host "$role" --host "$role" || exit 1
exec python3 "$here/check_capture.py" --lua "$repo/tools/wireshark/rdps.lua" --verdict "$verdict" \
    --dir "$out"
