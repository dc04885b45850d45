#!/usr/bin/env bash
# Forwarding benchmark (Benchmarks/ForwardBench): the client's cost per input report (decode + diff
# + encode + AES-GCM seal, heap allocations counted), loopback latency through the real client and
# host, and the idle cost of both ends. For scale, OpenSSL's own AES-256-GCM speed on 64-byte
# blocks is measured in the same run: the seal cannot be cheaper than that on this CPU.
#   tools/bench-forward.sh [REPORTS=5000]  (the loopback paces them at a pad's 250 a second)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
"$SWIFT" build -c release --product ForwardBench >&2
bin="$("$SWIFT" build -c release --show-bin-path)/ForwardBench"
out=$("$bin" Tests/HIDCodecsTests/Fixtures/recordings/dualsense_edge_usb_dsegde.hid "${1:-5000}")
echo "$out"
if command -v openssl >/dev/null; then
    # "AES-256-GCM  <k bytes/s>" for 64-byte blocks -> ns per block.
    rate=$(openssl speed -elapsed -evp aes-256-gcm -bytes 64 -seconds 1 2>/dev/null | awk '/^AES-256-GCM/ { sub(/k$/, "", $2); print $2 }')
    seal=$(echo "$out" | sed -n 's/.*seal_ns=\([0-9.]*\).*/\1/p')
    if [ -n "$rate" ] && [ -n "$seal" ]; then
        awk -v rate="$rate" -v seal="$seal" 'BEGIN { ns = 64 / (rate * 1000) * 1e9;
            printf "openssl_speed_aes256gcm_64B_ns=%.1f our_seal_ratio=%.2f\n", ns, seal / ns }'
    fi
fi
