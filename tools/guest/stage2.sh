#!/bin/bash
# Guest stage 2 (on the overlaid host root): udev, the input drivers, then the command.
# Its exit code and output leave through the read-write 9p share.
xfer=/run/padgate-xfer
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
mkdir -p /dev/pts /dev/shm /tmp /run/udev
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs tmpfs /dev/shm 2>/dev/null
ip link set lo up 2>/dev/null
/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1
modprobe -a uhid uinput evdev hid_generic hid_playstation hid_microsoft hid_nintendo hid_sony usbhid vhci_hcd snd_usb_audio || echo "guest: WARNING a driver did not load; device tests will fail" >&2
udevadm trigger --action=add >/dev/null 2>&1
udevadm settle --timeout=5 >/dev/null 2>&1
# The power-off can take the root (9p) away under the sleep: its complaint is noise.
finish() { echo "$1" > $xfer/rc; sync; echo 0 > /proc/sys/kernel/printk; echo o > /proc/sysrq-trigger; sleep 10 2>/dev/null; }
cd "$(cat $xfer/cwd)" || { echo "guest: $(cat $xfer/cwd) is not visible in the guest"; finish 1; }
set -a; . $xfer/env; set +a
export PADGATE_GUEST_OUT=$xfer/results PADGATE_IN_GUEST=1
# The kernel's warnings and errors as they come, among the tests' lines: a driver's refusal, a
# USB or sound error, a full uhid queue. Its clock (seconds since boot) is the monotonic one
# padgate's "µs (monotonic)" lines use.
# vhci-hcd's "Not yet implemented" (snd-usb-audio asks it for the frame number) is noise.
dmesg --follow-new --level=emerg,alert,crit,err,warn 2>/dev/null \
    | grep --line-buffered -v -E 'usb usb[0-9]+: Not yet implemented|vhci_get_frame_number: [0-9]+ callbacks suppressed' \
    | sed -u 's/^/guest kernel: /' > /dev/ttyS0 &
# A process that crashes (a Swift trap's invalid opcode, a segfault) is said at the info level only.
dmesg --follow-new --level=info 2>/dev/null \
    | grep --line-buffered -E 'segfault at|traps: |general protection' \
    | sed -u 's/^/guest kernel: /' > /dev/ttyS0 &
# A crash leaves a core, and its threads' stacks are printed at the end: a failure seen once
# should explain itself (the guest's tmpfs holds them; %E is the program's path, '/' as '!').
mkdir -p /tmp/cores
echo '/tmp/cores/core.%p.%s.%E' > /proc/sys/kernel/core_pattern
ulimit -c unlimited
bash $xfer/cmd > /dev/ttyS0 2>&1 < /dev/null
rc=$?
for core in /tmp/cores/core.*; do
    [ -e "$core" ] || break
    program=$(basename "$core" | cut -d. -f4- | tr '!' '/')
    echo "guest: a core from $program (signal $(basename "$core" | cut -d. -f3)); its threads' stacks:"
    timeout 300 gdb -batch -nx -ex 'info threads' -ex 'thread apply all bt 25' "$program" "$core" 2>&1 \
        | grep -v -E '^\[New LWP|^warning: (Could not|Unable to)' | head -400
done > /dev/ttyS0 2>&1
finish $rc
