#!/usr/bin/env bash
# The host on a hostile network (Benchmarks/ForwardBench/Hostile.swift, docs/security.md): a paired
# client forwards a pad at 250 reports/s through the real `forward` and `serve` code on loopback,
# alone and then while 100 idle TCP connections, 20 slow TLS handshakes, 50 000 junk datagrams/s and
# a pairing brute force (another process) run against the same host.
#   tools/bench-hostile.sh [SECONDS_PER_PHASE=10]
# Targets: p99 ratio <= 2, 0 lease expiries, RSS growth <= 5 MB, descriptors back to the baseline.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
"$SWIFT" build -c release --product ForwardBench >&2
"$("$SWIFT" build -c release --show-bin-path)/ForwardBench" --hostile "${1:-10}" | grep '^hostile_'
