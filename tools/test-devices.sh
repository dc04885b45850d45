#!/usr/bin/env bash
# Runs the device tests (Tests/DeviceTests) against real kernel drivers: directly where /dev/uhid
# and /dev/uinput are writable (a desktop Linux with the udev rules), else inside the test guest.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)
bundle="$bin/padgatePackageTests.xctest"
[ -x "$bundle" ] || { echo "build the tests first: swift build --build-tests" >&2; exit 1; }
# The game's view (SDLClientTests): a small C client against the system's libsdl2, and its twin
# against SDL 3 (built once from Debian's source package into a cache outside the clone), built
# here because the guest's file system is a throw-away overlay.
tools/build-sdl-probe.sh
tools/build-sdl3.sh
selected=$("$bundle" --list-tests | grep -E '^ *DeviceTests\.' | sed -E 's/^ *//; s#/.*##' | sort -u | paste -sd, -)
[ -n "$selected" ] || { echo "no device tests found in $bundle" >&2; exit 1; }
# Here a missing device is a failure, never a skip (DeviceTestSupport.swift).
export PADGATE_REQUIRE_DEVICES=1
run="'$bundle' '$selected'"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
if [ -w /dev/uhid ] && [ -w /dev/uinput ] && [ -z "${PADGATE_FORCE_GUEST:-}" ]; then
    echo "device tests: running directly (/dev/uhid is writable here)"
    eval "$run" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
else
    echo "device tests: no writable /dev/uhid here; booting the test guest (tools/guest)"
    # The guest emulates its CPU 10-25x slower than hardware: the signal watchdog gets 3 s there
    # instead of 0.8 s (docs/command-line.md, "Signals"); directly on hardware it keeps 0.8 s.
    export PADGATE_STOP_LIMIT_MS=${PADGATE_STOP_LIMIT_MS:-3000}
    tools/guest/setup.sh
    PADGATE_GUEST_TIMEOUT=${PADGATE_GUEST_TIMEOUT:-1500} tools/guest/run.sh "$run" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
fi
skipped=$(grep -cE "Test Case .* skipped" "$log" || true)
if [ "$rc" = 0 ] && [ "$skipped" != 0 ]; then
    echo "device tests: $skipped skipped where every one must run:"; grep -E "Test Case .* skipped" "$log"; rc=1
fi
# A wait that ran out its budget where the test then passed is a bug on the success path (issue 20):
# list every one, with its place, so it is seen rather than absorbed by a slow machine.
expired=$(grep -c "WAIT RAN OUT" "$log" || true)
if [ "$expired" != 0 ]; then
    echo "device tests: $expired waits ran out their budget (each is a bug where its test passed):"
    grep "WAIT RAN OUT" "$log" | sort | uniq -c
fi
if [ "$rc" != 0 ]; then
    # The end of a long log is what CI shows: repeat the failures there.
    echo "device tests failed (exit $rc):"
    grep -E "error: |failed \(|Fatal error|timed out" "$log" || echo "  (no test failure in the log: see the guest output above)"
fi
exit "$rc"
