#!/usr/bin/env bash
# `make test`: every phase in order, each timed, and a table of the phases' wall times at the end
# (also when a phase fails), so every run shows where its time went:
#   deps          Debian packages (tools/install-deps.sh)
#   guest set-up  the guest's kernels (tools/guest/kernels.conf), the SDL probes and SDL 3 (cached),
#                 beside the build: on a new machine it is mostly downloads (its log follows the build's)
#   build         the debug build with its tests, and the release binary the device tests run
#   kernel NAME   the device tests in one boot of that kernel (tools/test-devices.sh), with beside them:
#   unit          swift test here (device tests skip loudly without /dev/uhid; they run in the guest)
#   package       the service unit, make install and the .deb (tools/test-package.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
export PADGATE_PHASES
PADGATE_PHASES=$(mktemp)
trap 'rm -f "$PADGATE_PHASES"' EXIT
started=$SECONDS

phases_table() {
    echo "make test: wall time per phase"
    awk -F'\t' '{ printf "  %-22s %6d s  %s\n", $1, $2, $3 }' "$PADGATE_PHASES"
    echo "  $(printf '%-22s' total) $(printf '%6d' $((SECONDS - started))) s"
}
trap 'rc=$?; phases_table; rm -f "$PADGATE_PHASES"; exit $rc' EXIT

# Runs one phase and records its time and outcome.
phase() {
    local name=$1; shift
    local begin=$SECONDS rc=0
    echo "=== make test: $name"
    "$@" || rc=$?
    printf '%s\t%d\t%s\n' "$name" $((SECONDS - begin)) "$([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)")" >> "$PADGATE_PHASES"
    return $rc
}

direct_devices() { [ -w /dev/uhid ] && [ -w /dev/uinput ] && [ -z "${PADGATE_FORCE_GUEST:-}" ]; }

guest_setup() {
    tools/build-sdl-probe.sh
    tools/build-sdl3.sh
    direct_devices && return 0
    local entry
    for entry in ${PADGATE_GUEST_KERNELS:-6.12 6.1 newest}; do
        PADGATE_GUEST_KERNEL=${entry%%:*} tools/guest/setup.sh >/dev/null
    done
}

# Called as `phase build build || …`, where bash ignores `set -e`: every step checks its own status.
# A failed compile prints its errors again at the end, where a log's tail shows them (a compile error
# scrolls by among the other jobs' progress lines).
build() {
    local log rc=0
    tools/check-imports.py "$swift" || return $?
    log=$(mktemp)
    # Two compile jobs a core, as the Makefile's builds (BUILD_JOBS there).
    "$swift" build --build-tests -j $(( $(nproc) * 2 )) 2>&1 | tee "$log" || rc=$?
    if [ $rc != 0 ]; then
        echo "build: swift build --build-tests failed (exit $rc); its errors:"
        grep -E "error:|Killed|signal" "$log" | head -40
        rm -f "$log"
        return $rc
    fi
    rm -f "$log"
    make -s release >/dev/null || return $?
    local bin
    bin=$("$swift" build --show-bin-path)
    [ -x "$bin/padgate" ] && [ -e "$bin/padgatePackageTests.xctest" ] || {
        echo "build: finished but $bin lacks padgate or padgatePackageTests.xctest"; ls -la "$bin" | head -20; return 1; }
}

# The test bundle itself rather than `swift test`, which holds the build directory's lock for the
# whole run (the package phase beside it builds the .deb).
unit() {
    local bundle filter=()
    bundle="$("$swift" build --show-bin-path)/padgatePackageTests.xctest"
    if direct_devices; then
        filter=("$("$bundle" --list-tests | sed -E 's/^ *//; s#/.*##' | grep -v '^DeviceTests\.' | sort -u | paste -sd, -)")
    fi
    "$bundle" "${filter[@]}"
}

# A phase beside the one in front: its output goes to a log shown when it is awaited (after the
# front phase's), so the two never interleave.
side_log=$(mktemp)
side=""
beside() { beside_command phase "$@"; }
beside_command() {
    "$@" >"$side_log" 2>&1 &
    side=$!
}
await_beside() {
    local rc=0
    wait "$side" || rc=$?
    side=""
    echo "=== make test: $1 (ran beside the phase above)"
    cat "$side_log"
    # The end of a long log is what CI shows: the side phase's failures again there.
    [ $rc = 0 ] || { echo "$1 failed (exit $rc):"; grep -E "error: |failed \(|Fatal error" "$side_log" | sed 's/^/  /' | head -40 || true; }
    return $rc
}
trap 'rc=$?; [ -z "$side" ] || kill "$side" 2>/dev/null || true; phases_table; rm -f "$PADGATE_PHASES" "$side_log"; exit $rc' EXIT

phase deps tools/install-deps.sh
# On a new machine the guest's set-up is mostly downloads: beside the build, which is mostly CPU.
beside "guest set-up" guest_setup
front=0
phase build build || front=$?
await_beside "guest set-up"
[ $front = 0 ] || exit $front
# The unit tests mostly wait on their own processes and sockets (216 s of wall time for 68 s of
# CPU), and the package checks on dpkg's database and systemd-analyze: both run beside the
# device tests, whose guest is the CPU-bound part, instead of before them (docs/testing.md).
unit_and_package() {
    local rc=0
    phase unit unit || rc=$?
    phase package tools/test-package.sh || rc=$?
    return $rc
}
beside_command unit_and_package
front=0
# test-devices.sh records one phase per kernel itself.
tools/test-devices.sh || front=$?
await_beside "unit and package"
[ $front = 0 ] || exit $front
