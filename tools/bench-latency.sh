#!/usr/bin/env bash
# End-to-end input latency against the kernel's floor (Benchmarks/LatencyBench, docs/latency.md):
# in one boot of the test guest (real uhid, uinput and hid-playstation), a report written to the
# client's physical pad → the event on the host's virtual pad's evdev node through the real
# `padgate serve` and `padgate forward` on loopback; the kernel alone (uhid → evdev on both
# sides, uinput → evdev); and ForwardBench's in-process loopback latency. Prints padgate's added
# latency (end to end − both sides' floors) and its p99 over the in-process p99 (target ≤ 2).
#   tools/bench-latency.sh [SAMPLES=10000]
# Runs directly where /dev/uhid and /dev/uinput are writable, else in the guest (tools/guest).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
# Built here: the guest sees this file system read-only.
for product in padgate ForwardBench LatencyBench; do "$SWIFT" build -c release --product "$product" >&2; done
bin=$("$SWIFT" build -c release --show-bin-path)
run="'$bin/LatencyBench' Tests/HIDCodecsTests/Fixtures/recordings/dualsense_edge_usb_dsegde.hid ${1:-10000}"
if [ -w /dev/uhid ] && [ -w /dev/uinput ] && [ -z "${PADGATE_FORCE_GUEST:-}" ]; then
    eval "$run"
else
    tools/guest/setup.sh >&2
    PADGATE_GUEST_TIMEOUT=${PADGATE_GUEST_TIMEOUT:-1500} tools/guest/run.sh "$run"
fi
# Other forwarders on PyPI, checked 2026-11-24: padrelay 3.0.0 reads pads with pygame and
# presents them through vgamepad/ViGEmBus, a Windows-only server, so it cannot be measured here.
echo "other_forwarders: none measured (padrelay, the one gamepad forwarder on PyPI, needs a Windows server: vgamepad/ViGEmBus)"
