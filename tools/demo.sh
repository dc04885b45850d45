#!/usr/bin/env bash
# `make demo`: `padgate demo` forwards a scripted DualSense to a host on this machine over the real
# link (TLS 1.3 + AES-GCM datagrams on loopback) and shows both ends live, while the host's "game"
# plays lights, rumble and trigger effects back to the pad.
#   PADGATE_DEMO_GUEST=1  run it inside the test guest, with kernel devices (uhid, hid-playstation)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)
seconds=${PADGATE_DEMO_SECONDS:-15}
if [ -n "${PADGATE_DEMO_GUEST:-}" ]; then
    echo "Running the demo in the test guest (Debian's kernel under QEMU) with kernel devices."
    tools/guest/setup.sh >/dev/null
    PADGATE_GUEST_TIMEOUT=300 tools/guest/run.sh "'$bin/padgate' demo --devices kernel --duration $seconds"
else
    "$bin/padgate" demo --duration "$seconds"
    [ -w /dev/uhid ] || echo "With kernel devices instead of stand-ins: make demo-guest (boots the test guest)."
fi
