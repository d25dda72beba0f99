#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# auth-instructions.sh - instructions per message through the pub/sub API, keyless against keyed (authenticated only, and encrypted), measured with callgrind.
# Usage: tests/bench/auth-instructions.sh [BUILD_DIR (default build)] [MSG_BYTES (64)] [MODE (send)] [BATCH (32)]
#        RDPS_BENCH_MORE=1: messages share datagrams (RDPS_SEND_MORE chains of BATCH);
#        RDPS_BENCH_MTU=4096: 4096-byte datagrams (rxe on a 9000-byte netdev; default 1024).
# MODE: send or reliable-send (pubsub_bench's modes). Runs pubsub_bench (publisher ctx ->
# loopback fabric -> subscriber ctx) with N1 and N2 messages for each of keyless, auth
# (RDPS_BENCH_KEY=auth: every frame tagged, XChaCha20-Poly1305) and encrypt; start-up cost
# cancels in the difference. Per message: rdps_pub_send inclusive (the seal included: the
# loopback transport delivers during the publisher's flush, so its copy into the receiver is
# in there too), the subscriber's poll loop inclusive (verification included), the whole
# process, and what of it runs inside libsodium (the AEAD calls, and HChaCha20: the
# per-sender subkeys are cached, so it should be ~0 per message). Use a release-like build.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
msg=${2:-64}
mode=${3:-send}
batch=${4:-32}
bench=$build/tests/bench/pubsub_bench
[ -x "$bench" ] || { echo "auth-instructions: $bench not built (cmake --build $build --target pubsub_bench)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "auth-instructions: valgrind not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
n1=10000
n2=40000

run() { # key n
    RDPS_BENCH_KEY=$1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1.$2" \
        "$bench" "$2" "$mode" "$batch" "$msg" >"$tmp/out.$1.$2" 2>"$tmp/log.$1.$2" ||
        { cat "$tmp/out.$1.$2" "$tmp/log.$1.$2" >&2; exit 1; }
    (cd / && callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$tmp/cg.$1.$2") >"$tmp/ann.$1.$2"
}
incl() { # file pattern
    awk -v pat="$2" '$0 ~ pat && $1 ~ /^[0-9,]+$/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$1"
}
total() {
    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$1"
}
per() { # key pattern
    awk -v a="$(incl "$tmp/ann.$1.$n1" "$2")" -v b="$(incl "$tmp/ann.$1.$n2" "$2")" \
        -v d=$((n2 - n1)) 'BEGIN { printf "%.1f", (b - a) / d }'
}
per_total() {
    awk -v a="$(total "$tmp/ann.$1.$n1")" -v b="$(total "$tmp/ann.$1.$n2")" \
        -v d=$((n2 - n1)) 'BEGIN { printf "%.1f", (b - a) / d }'
}

echo "pub/sub API ($mode), $msg-byte messages, loopback transport, $((n2 - n1)) messages measured;"
echo "instructions per message:"
printf "  %-8s %10s %10s %12s %12s %10s %10s\n" key published delivered end-to-end "x keyless" libsodium hchacha20
base=""
for key in none auth encrypt; do
    run $key $n1
    run $key $n2
    pub=$(per $key ':rdps_pub_send(_ex)? \[')
    rx=$(per $key ':bench_poll_subscriber \[')
    all=$(per_total $key)
    # The AEAD: libsodium's detached calls (before 1.3), or its ChaCha20 and Poly1305 primitives
    # (1.3 computes the tag over the frame and the binding itself): siblings, never nested.
    sodium=$(per $key ':(crypto_aead_chacha20poly1305_ietf_(en|de)crypt_detached|crypto_stream_chacha20_ietf(_xor_ic)?|crypto_onetimeauth_poly1305_(init|update|final)|crypto_verify_16) \[')
    hchacha=$(per $key ':crypto_core_hchacha20 \[')
    [ -n "$base" ] || base=$all
    ratio=$(awk -v a="$all" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
    label=$key
    [ "$key" = none ] && label=keyless
    printf "  %-8s %10s %10s %12s %12s %10s %10s\n" "$label" "$pub" "$rx" "$all" "$ratio" "$sodium" "$hchacha"
done
echo "(libsodium: inside its AEAD calls or the ChaCha20/Poly1305 primitives, both sides;"
echo " end-to-end: the whole process, publisher and subscriber, per message)"
