#!/usr/bin/env bash
# Prepares the device-test guest: Debian's own kernel, unpacked privately (nothing is installed into
# /boot or /lib/modules), an uncompressed vmlinux for fast PVH boot, and a busybox initramfs that
# mounts the host's root read-only over 9p with a tmpfs overlay. Idempotent.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${PADGATE_GUEST_DIR:-$root/.guest}
# Pinned kernel: the version the device tests are known to pass against.
kernel_pkg=${PADGATE_GUEST_KERNEL_PKG:-linux-image-6.1.0-50-amd64-unsigned}

. "$root/tools/apt-packages.sh"

# iproute2 for the lossy-link test's network namespaces (the guest runs the host's binaries).
install_host_packages() {
    install_packages guest qemu-system-x86 busybox-static cpio kmod udev xz-utils iproute2
}

fetch_kernel() {
    [ -f "$out/kernel/.done" ] && return
    rm -rf "$out/kernel" "$out/deb" && mkdir -p "$out/kernel" "$out/deb"
    if ! (cd "$out/deb" && apt-get download "$kernel_pkg" >/dev/null 2>&1); then
        # The pinned build left the archive: fall back to the current one, loudly.
        as_root apt-get update -qq
        if ! (cd "$out/deb" && apt-get download "$kernel_pkg" >/dev/null 2>&1); then
            kernel_pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
            echo "guest: WARNING pinned kernel unavailable, using $kernel_pkg" >&2
            (cd "$out/deb" && apt-get download "$kernel_pkg" >/dev/null)
        fi
    fi
    dpkg-deb -x "$out"/deb/*.deb "$out/kernel"
    rm -rf "$out/deb"
    local ver
    ver=$(ls "$out/kernel/lib/modules")
    depmod -b "$out/kernel" "$ver"
    echo "$ver" > "$out/kernel/.version"
    touch "$out/kernel/.done"
}

# The bzImage wraps an xz stream; QEMU boots the ELF inside it directly, twice as fast.
extract_vmlinux() {
    [ -f "$out/vmlinux" ] && return
    local ver image offset
    ver=$(cat "$out/kernel/.version")
    image="$out/kernel/boot/vmlinuz-$ver"
    offset=$(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$image" | head -1 | cut -d: -f1)
    tail -c +"$((offset + 1))" "$image" | xz -dc 2>/dev/null > "$out/vmlinux.tmp" || true
    if [ "$(head -c 4 "$out/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = "7f454c46" ]; then
        mv "$out/vmlinux.tmp" "$out/vmlinux"
    else
        echo "guest: could not unpack vmlinux, booting the bzImage" >&2
        rm -f "$out/vmlinux.tmp"; cp "$image" "$out/vmlinux"
    fi
}

build_initramfs() {
    [ -f "$out/initrd.cpio.gz" ] && [ "$out/initrd.cpio.gz" -nt "$here/init" ] && return
    local ver stage
    ver=$(cat "$out/kernel/.version")
    stage=$(mktemp -d)
    mkdir -p "$stage"/{bin,dev,proc,sys,newroot,lower,upper,mods}
    cp /bin/busybox "$stage/bin/busybox"
    for m in virtio_pci 9pnet_virtio 9p overlay; do
        modprobe -d "$out/kernel" -S "$ver" --show-depends "$m" | awk '$1=="insmod"{print $2}'
    done | awk '!seen[$0]++' > "$stage/mods/order"
    while read -r ko; do cp "$ko" "$stage/mods/"; done < "$stage/mods/order"
    sed -i 's#.*/##' "$stage/mods/order"
    cp "$here/init" "$stage/init"; chmod +x "$stage/init"
    echo "$ver" > "$stage/kver"
    echo "$out/kernel/lib/modules/$ver" > "$stage/modpath"
    (cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initrd.cpio.gz"
    rm -rf "$stage"
}

install_host_packages
mkdir -p "$out"
fetch_kernel
extract_vmlinux
build_initramfs
echo "guest: ready ($(cat "$out/kernel/.version")) in $out"
