#!/usr/bin/env bash
# Runs the device tests (Tests/DeviceTests) against real kernel drivers: directly where /dev/uhid
# and /dev/uinput are writable (a desktop Linux with the udev rules), else inside the test guest,
# once per kernel line people run (tools/guest/kernels.conf): Debian 13's 6.12 gets the whole
# suite, Debian 12's 6.1 and the newest line (sid) the classes that touch a driver (below).
# PADGATE_GUEST_KERNELS picks others, e.g. PADGATE_GUEST_KERNELS=6.1 for one; a name followed by
# ":all" runs the whole suite there.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)
bundle="$bin/padgatePackageTests.xctest"
[ -x "$bundle" ] || { echo "build the tests first: swift build --build-tests" >&2; exit 1; }
# The game's view (SDLClientTests): a small C client against the system's libsdl2, and its twin
# against SDL 3 (built once from Debian's source package into a cache outside the clone) and
# against sid's SDL 3.4 (its binary package and libraries, for the drivers 3.2 lacks), built here
# because the guest's file system is a throw-away overlay.
tools/build-sdl-probe.sh
tools/build-sdl3.sh
tools/sdl34-runtime.sh
all=$("$bundle" --list-tests | grep -E '^ *DeviceTests\.' | sed -E 's/^ *//; s#/.*##' | sort -u | paste -sd, -)
# Benchmarks that need the guest (classes named …Bench) run only when named (make bench-haptics).
benches=$(tr , '\n' <<< "$all" | grep -E 'Bench$' | paste -sd, - || true)
all=$(tr , '\n' <<< "$all" | grep -vE 'Bench$' | paste -sd, - || true)
[ -n "$all" ] || { echo "no device tests found in $bundle" >&2; exit 1; }
# PADGATE_DEVICE_CLASSES=GyroCalibrationTests,ForwardingTests runs only those classes (on every kernel
# chosen); an entry Class/test runs that one test (PADGATE_DEVICE_CLASSES=DoctorDeviceTests,ForwardingTests/testTwoPads…).
if [ -n "${PADGATE_DEVICE_CLASSES:-}" ]; then
    single=$(tr , '\n' <<< "$PADGATE_DEVICE_CLASSES" | grep / | sed 's/^/DeviceTests./' || true)
    all=$( { tr , '\n' <<< "$all,$benches" | grep -xF -f <(tr , '\n' <<< "$PADGATE_DEVICE_CLASSES" | sed 's/^/DeviceTests./') || true
             [ -z "$single" ] || "$bundle" --list-tests | sed -E 's/^ *//' | grep -xF -f <(echo "$single") || true; } | paste -sd, - )
    [ -n "$all" ] || { echo "PADGATE_DEVICE_CLASSES names no device test class: $PADGATE_DEVICE_CLASSES" >&2; exit 1; }
fi
# Every kernel line runs the classes that touch a kernel driver, SDL or a version rule (each family
# bound and forwarded, USB pads on vhci-hcd, the Steam pads, SDL on an emulated pad, feedback, the
# coils' card through snd-usb-audio, the microphone, calibration, hid-replay, udev rules, doctor).
# The rest depends on no driver and runs once, on 6.12: padgate's own link, LAN, administration,
# signals, its command line and demo, the exclusive hold (evdev's EVIOCGRAB, the same in every
# line), the pads' independence, and two classes whose driver part another class holds on every
# line: GyroCalibrationTests (the motion nodes' values are PadFamilyForwardingTests') and
# HapticsOnMotorsTests (the DualShock 4's and Switch Pro's rumble reports PadFamilyForwardingTests').
# Of HapticsForwardingTests (240 s of 6.12's 1000 s with the unit tests beside) the other lines run
# the USB pad's coils through the host pad's own card; its timing tests run once (docs/testing.md).
driver_classes="USBPadTests,HostPadOrderDeviceTests,SteamControllerDeviceTests,CalibrateTests,HIDReplayTests,HostVirtualPadMarkTests,ForwardingTests,PadFamilyForwardingTests,SDLClientTests,FeedbackDualSenseTests,FeedbackUInputTests,EmulatedDualSenseTests,EmulatedDualShock4Tests,EmulatedSwitchProTests,EmulateEveryFamilyTests,HapticsDeviceTests,MicrophoneForwardingTests,UdevRulesTests,DoctorDeviceTests,EvdevConventionTests,UInputGamepadTests,SteamDeckDeviceTests"
driver_tests="HapticsForwardingTests/testAGamesHapticsReachAUSBPadsCoilsAsItsOwnAudio"
# SDL's version does not change with the kernel: the SDL tests of an emulated pad (both SDLs, a few
# seconds each) run on every line, and the forwarded-pad SDL tests (10-20 s each) with one SDL: SDL 2
# on Debian 12's 6.1, SDL 3 on Debian 13's 6.12 (docs/testing.md); the newest line runs none of them
# (its SDL is 6.12's). PADGATE_BOTH_SDL=1 runs both SDLs' forwarded tests everywhere.
forwarded_sdl_tests="SDLClientTests/testAGameOnTheHostSeesTheForwarded"
sdl_of_line() { [ -n "${PADGATE_BOTH_SDL:-}" ] || case $1 in 6.1) echo 2 ;; 6.12) echo 3 ;; *) echo none ;; esac; }
# The chosen classes on a line (every chosen class, or with SUBSET those that touch a driver and the
# single tests of driver_tests), as XCTest filters ("Class" or "Class/test").
line_selection() {
    local name=$1 subset=$2 classes sdl test
    classes=$(tr , '\n' <<< "$all")
    if [ -n "$subset" ]; then
        classes=$( { awk -F/ -v keep="$driver_classes" 'BEGIN { n = split(keep, k, ","); for (i = 1; i <= n; i++) ok["DeviceTests." k[i]] = 1 } ok[$1]' <<< "$classes"
                     for test in ${driver_tests//,/ }; do
                         if grep -qxF "DeviceTests.${test%%/*}" <<< "$classes"; then echo "DeviceTests.$test"; fi
                     done; } || true)
    fi
    sdl=$(sdl_of_line "$name")
    if [ -n "$sdl" ] && grep -qxF DeviceTests.SDLClientTests <<< "$classes"; then
        classes=$(grep -vxF DeviceTests.SDLClientTests <<< "$classes"
            "$bundle" --list-tests | sed -E 's/^ *//' | grep -E '^DeviceTests\.SDLClientTests/' |
                awk -v f="DeviceTests.$forwarded_sdl_tests" -v sdl="$sdl" \
                    'index($0, f) != 1 || (sdl != "none" && (sdl == 3) == (index($0, "SDL3") > 0))')
    fi
    paste -sd, - <<< "$classes"
}
# Here a missing device is a failure, never a skip (DeviceTestSupport.swift).
export PADGATE_REQUIRE_DEVICES=1

# The suite runs from a copy of the test bundle and padgate (next to each other, as the tests
# expect): a rebuild during a long run must not change the binaries under it. padgate is the
# release build, the binary `make deb` packages: the one users run, at its speed (a debug build
# spends several times the CPU, which on the emulated guest is the difference between a pad's
# audio clock kept and lost). PADGATE_DEVICE_BINARY=debug uses the debug build instead.
snapshot=$(mktemp -d "$PWD/.build/device-run.XXXXXX")
log=$(mktemp)
trap 'rm -rf "$snapshot" "$log"' EXIT
if [ "${PADGATE_DEVICE_BINARY:-release}" = debug ]; then
    padgate_bin="$bin/padgate"
else
    make -s release >/dev/null
    padgate_bin="$(swift build -c release --show-bin-path)/padgate"
fi
echo "device tests: padgate is $padgate_bin"
cp "$bundle" "$padgate_bin" "$snapshot/"

# Checks one run's log: skips are failures here, and a wait that ran out its budget where the test
# then passed is a bug on the success path (issue 20), listed with its place.
check_log() {
    local rc=$1 where=$2 skipped expired
    skipped=$(grep -cE "Test Case .* skipped" "$log" || true)
    if [ "$rc" = 0 ] && [ "$skipped" != 0 ]; then
        echo "device tests ($where): $skipped skipped where every one must run:"; grep -E "Test Case .* skipped" "$log"; rc=1
    fi
    expired=$(grep -c "WAIT RAN OUT" "$log" || true)
    if [ "$expired" != 0 ]; then
        echo "device tests ($where): $expired waits ran out their budget (each is a bug where its test passed):"
        grep "WAIT RAN OUT" "$log" | sort | uniq -c
    fi
    if [ "$rc" != 0 ]; then
        # The end of a long log is what CI shows: repeat the failures there, with the kernel.
        echo "device tests failed on $where (exit $rc):"
        grep -E "error: |failed \(|Fatal error|timed out" "$log" | sed "s|^|  [$where] |" || echo "  (no test failure in the log: see the guest output above)"
    fi
    return "$rc"
}

# Repeat mode (tools/test-repeat.sh): the chosen classes N times in one boot, every run to its
# end; the kernel fails if any run failed, and a table per test says runs, failures, slowest pass.
repeat=${PADGATE_DEVICE_REPEAT:-1}
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "PADGATE_DEVICE_REPEAT must be a count: $repeat" >&2; exit 2; }
suite_command() {
    local selected=$1
    if [ "$repeat" = 1 ]; then
        printf "'%s' '%s'" "$snapshot/padgatePackageTests.xctest" "$selected"
    else
        printf "rc=0; for i in \$(seq %d); do echo \"=== repeat \$i of %d\"; '%s' '%s' || rc=1; done; exit \$rc" \
            "$repeat" "$repeat" "$snapshot/padgatePackageTests.xctest" "$selected"
    fi
}
# Per test: runs, failures, slowest pass (XCTest's own "Test Case '…' passed (S seconds)" lines).
repeat_table() {
    local where=$1
    echo "repeat table on $where ($repeat runs each):"
    sed -nE "s/^Test Case '([^']+)' (passed|failed) \(([0-9.]+) seconds\).*/\1 \2 \3/p" "$log" | awk -v where="$where" '
        { runs[$1]++; if ($2 == "failed") failed[$1]++; else if ($3 > slowest[$1]) slowest[$1] = $3 }
        END { for (t in runs) printf "  %-78s %5d %8d %10.1f s\n", t, runs[t], failed[t], slowest[t] }' |
        sort | { printf "  %-78s %5s %8s %12s\n" "test ($where)" runs failures "slowest pass"; cat; } |
        tee -a "${PADGATE_REPEAT_TABLE:-/dev/null}"
}
record_phase() {  # name, seconds, rc: one line of make test's phase table (tools/test-all.sh)
    [ -n "${PADGATE_PHASES:-}" ] || return 0
    printf 'kernel %s\t%d\t%s\n' "$1" "$2" "$([ "$3" = 0 ] && echo ok || echo FAILED)" >> "$PADGATE_PHASES"
}

if [ -w /dev/uhid ] && [ -w /dev/uinput ] && [ -z "${PADGATE_FORCE_GUEST:-}" ]; then
    echo "device tests: running directly on $(uname -r) (/dev/uhid is writable here)"
    rc=0 started=$SECONDS
    bash -c "$(suite_command "$all")" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
    [ "$repeat" = 1 ] && [ -z "${PADGATE_REPEAT_TABLE:-}" ] || repeat_table "$(uname -r)"
    check_log "$rc" "$(uname -r)" || rc=$?
    record_phase "$(uname -r)" $((SECONDS - started)) "$rc"
    exit "$rc"
fi

echo "device tests: no writable /dev/uhid here; booting the test guest (tools/guest) per kernel"
# The guest emulates its CPU 10-25x slower than hardware: the signal watchdog gets 3 s there
# instead of 0.8 s (docs/command-line.md, "Signals"); directly on hardware it keeps 0.8 s.
export PADGATE_STOP_LIMIT_MS=${PADGATE_STOP_LIMIT_MS:-3000}
failed=() summary=()
for entry in ${PADGATE_GUEST_KERNELS:-6.12:all 6.1 newest}; do
    name=${entry%%:*}
    selected=$(line_selection "$name" "$([ "$entry" = "$name" ] && echo subset)")
    [ -n "$selected" ] || { echo "device tests on $name: none of the chosen classes touches a driver (add :all to run them there)"; continue; }
    dir=$(PADGATE_GUEST_KERNEL=$name tools/guest/setup.sh)
    version=$(cat "$dir/kernel/.version")
    where="$name ($version)"
    echo "=== device tests on kernel $where: $(tr , '\n' <<< "$selected" | wc -l) classes and tests"
    started=$SECONDS
    for attempt in 1 2; do
        rc=0
        PADGATE_GUEST_KERNEL=$name PADGATE_GUEST_TIMEOUT=${PADGATE_GUEST_TIMEOUT:-$((2400 * repeat))} \
            tools/guest/run.sh "$(suite_command "$selected")" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
        # A kernel that panicked while booting (software emulation now and then faults while the
        # kernel patches its own text) ran no test: it is booted once more, and says so.
        if [ "$rc" != 0 ] && [ "$attempt" = 1 ] && ! grep -q "Test Case" "$log" && grep -q "Kernel panic" "$log"; then
            echo "device tests: the guest's kernel panicked while booting on $where, before any test; booting it again"
            continue
        fi
        break
    done
    passed=$(grep -cE "Test Case .* passed" "$log" || true)
    failures=$(grep -cE "Test Case .* failed" "$log" || true)
    summary+=("$where: $passed passed, $failures failed in $((SECONDS - started)) s")
    [ "$repeat" = 1 ] && [ -z "${PADGATE_REPEAT_TABLE:-}" ] || repeat_table "$where"
    kernel_rc=0
    check_log "$rc" "$where" || { kernel_rc=1; failed+=("$where"); }
    record_phase "$name" $((SECONDS - started)) "$kernel_rc"
done
echo "device tests, per kernel:"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
    echo "device tests failed on: ${failed[*]}"
    exit 1
fi
