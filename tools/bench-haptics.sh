#!/usr/bin/env bash
# Haptics benchmark (docs/haptics.md): the cost of each stage of the path `serve` and `forward`
# run for every 5 ms block (HapticsBench: CPU per second of haptics, bytes on the wire, 0
# allocations in steady state; exits non-zero when a target is missed), then the added latency
# against the real drivers in the test guest (HapticsLatencyBench: a game's write into the host
# pad's card to the physical pad's report, p50/p99, beside the kernel's own floor in one boot).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
"$SWIFT" build -c release --product HapticsBench >&2
"$("$SWIFT" build -c release --show-bin-path)/HapticsBench"
if [ -z "${PADGATE_BENCH_NO_GUEST:-}" ]; then
    "$SWIFT" build --build-tests >&2
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    rc=0
    PADGATE_GUEST_KERNELS="${PADGATE_GUEST_KERNELS:-6.12:all}" PADGATE_DEVICE_CLASSES=HapticsLatencyBench tools/test-devices.sh > "$log" 2>&1 || rc=$?
    grep -E "haptics latency|haptics stage|passed,|failed|error:" "$log" || tail -20 "$log"
    exit $rc
fi
