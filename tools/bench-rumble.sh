#!/usr/bin/env bash
# Rumble divergence benchmark: padgate's renderer against SDL's keep-alive policy through the same
# seeded lossy channel (20% loss, 0-30 ms jitter, hence reordering). Exits non-zero when padgate
# misses its targets (p99 divergence <= 60 ms, silence <= 300 ms after the channel dies).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
"$SWIFT" build -c release --product RumbleBench >&2
bin="$("$SWIFT" build -c release --show-bin-path)/RumbleBench"
rc=0
for seed in ${SEEDS:-42 7 1234}; do
    "$bin" --seed "$seed" --seconds "${SECONDS_PER_RUN:-120}" "$@" || rc=1
    echo
done
exit $rc
