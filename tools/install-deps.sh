#!/usr/bin/env bash
# Installs the Debian packages padgate builds and tests with (root or sudo). Idempotent and quiet
# when everything is there. The Swift toolchain itself is expected at /opt/swift or on PATH.
set -euo pipefail
packages=(
    pkg-config libevdev-dev libudev-dev libhidapi-dev libssl-dev zlib1g-dev   # build
    qemu-system-x86 busybox-static cpio kmod udev xz-utils iproute2          # device-test guest
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
echo "installing: ${missing[*]}"
as_root apt-get update -qq
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
command -v swift >/dev/null || [ -x /opt/swift/usr/bin/swift ] || {
    echo "padgate needs a Swift 6 toolchain (swift.org) on PATH or at /opt/swift" >&2; exit 1; }
