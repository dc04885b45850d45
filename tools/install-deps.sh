#!/usr/bin/env bash
# Installs the Debian packages padgate builds and tests with (root or sudo). Idempotent and quiet
# when everything is there. The Swift toolchain itself is expected at /opt/swift or on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/apt-packages.sh
install_packages padgate pkg-config libevdev-dev libudev-dev libhidapi-dev libssl-dev zlib1g-dev libavahi-client-dev libasound2-dev libopus-dev
# LAN discovery's tests run the real daemons (tools/lan/rig.sh): avahi-daemon, its browser, D-Bus,
# and iproute2 for the namespaces that play two machines.
install_packages padgate avahi-daemon avahi-utils dbus-daemon dbus-bin iproute2
# strace: the tests that check a command only reads (doctor) watch its system calls.
install_packages padgate strace
command -v swift >/dev/null || [ -x /opt/swift/usr/bin/swift ] || {
    echo "padgate needs a Swift 6 toolchain (swift.org) on PATH or at /opt/swift" >&2; exit 1; }

# hid-tools (hid-decode, hid-replay, hid-recorder): the reference our hid-recorder files and decoder are
# checked against, and the Python decoder `make bench` compares with. Private venv, pinned version.
install_packages padgate python3 python3-venv
hid_tools=.tools/python
if ! "$hid_tools/bin/python" -c 'import hidtools, pyudev' 2>/dev/null; then
    echo "padgate: installing hid-tools 0.12 into $hid_tools"
    rm -rf "$hid_tools"
    /usr/bin/python3 -m venv "$hid_tools"
    "$hid_tools/bin/pip" install -q 'hid-tools==0.12' pyudev   # pyudev: hid-replay's uhid devices
fi
