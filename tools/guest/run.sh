#!/usr/bin/env bash
# Runs a shell command inside the device-test guest and returns its exit code:
#   tools/guest/run.sh 'modprobe -n uhid && ls /dev/uhid'
# The guest sees the host's file system read-only (writes go to a throw-away overlay), the same
# working directory, and PADGATE_* variables from the caller's environment. PADGATE_GUEST_KERNEL
# names the kernel (tools/guest/kernels.conf; default 6.12).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
timeout_s=${PADGATE_GUEST_TIMEOUT:-1200}
[ $# -ge 1 ] || { echo "usage: $0 'COMMAND'" >&2; exit 2; }

out=$("$here/setup.sh" 2>/dev/null) || out=$("$here/setup.sh")
xfer=$(mktemp -d "$out/xfer.XXXXXX")
trap 'rm -rf "$xfer"' EXIT
cp "$here/stage2.sh" "$xfer/stage2.sh"
mkdir -p "$xfer/results"  # the guest's PADGATE_GUEST_OUT: copied to $PADGATE_GUEST_RESULTS
printf '%s\n' "$*" > "$xfer/cmd"
pwd > "$xfer/cwd"
env | grep -E '^(PADGATE_|SWIFT_|XCT)' | sed -E "s/^([^=]*)=(.*)$/\1='\2'/" > "$xfer/env" || true
log="$xfer/serial.log"; : > "$log"

vmlinux="$out/vmlinux"
timeout "$timeout_s" qemu-system-x86_64 \
    -machine q35 -accel tcg,thread=multi,tb-size=256 -cpu max -smp 2 -m 1536 \
    -nodefaults -no-user-config -display none -no-reboot \
    -serial "file:$log" \
    -kernel "$vmlinux" -initrd "$out/initrd.cpio.gz" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init mitigations=off nokaslr tsc=reliable no_timer_check" \
    -fsdev local,id=r,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=r,mount_tag=root \
    -fsdev local,id=x,path="$xfer",security_model=none \
    -device virtio-9p-pci,fsdev=x,mount_tag=xfer &
qemu=$!
# The kernel's own power-off lines are noise in a test log.
tail -n +1 -f --pid=$qemu "$log" | grep --line-buffered -v -E 'sysrq: Power Off|reboot: Power down' &
tailer=$!
qemu_rc=0
wait $qemu || qemu_rc=$?
wait $tailer 2>/dev/null || true
[ "$qemu_rc" = 124 ] && echo "guest: timed out after ${timeout_s}s" >&2
if [ -n "${PADGATE_GUEST_RESULTS:-}" ] && [ -d "$xfer/results" ]; then
    mkdir -p "$PADGATE_GUEST_RESULTS" && cp -r "$xfer/results/." "$PADGATE_GUEST_RESULTS/"
fi
if [ -f "$xfer/rc" ]; then
    exit "$(cat "$xfer/rc")"
fi
echo "guest: the command did not finish (no exit code came back)" >&2
exit 125
