#!/usr/bin/env bash
# `make demo`: an emulated DualSense (uhid, bound by the kernel's real hid-playstation driver)
# plays a scripted tour of its controls; `padgate list` finds it and `padgate watch` shows it live.
# Runs directly where /dev/uhid is writable, otherwise inside the test guest (tools/guest).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)
seconds=${PADGATE_DEMO_SECONDS:-8}
read -r -d '' steps <<SCRIPT || true
set -e
"$bin/padgate" emulate dualsense --script tools/demo/dualsense.script --duration $((seconds + 4)) > /tmp/padgate-demo-outputs.txt &
sleep 2
echo "== padgate list"
"$bin/padgate" list
echo
echo "== padgate watch 054c:0ce6 --no-motion (${seconds}s)"
"$bin/padgate" watch 054c:0ce6 --no-motion --duration $seconds
echo
echo "== output reports the kernel sent to the emulated pad (lightbar, player LEDs at probe)"
wait
cat /tmp/padgate-demo-outputs.txt
SCRIPT
if [ -w /dev/uhid ]; then
    bash -c "$steps"
else
    echo "No writable /dev/uhid on this machine: running the demo in the test guest (Debian's kernel under QEMU)."
    tools/guest/setup.sh >/dev/null
    PADGATE_GUEST_TIMEOUT=300 tools/guest/run.sh "$steps"
fi
