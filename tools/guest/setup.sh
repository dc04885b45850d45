#!/usr/bin/env bash
# Prepares a device-test guest: one of Debian's own kernels (tools/guest/kernels.conf; the name in
# PADGATE_GUEST_KERNEL, default 6.12), unpacked privately (nothing is installed into /boot or
# /lib/modules), an uncompressed vmlinux for fast PVH boot, and a busybox initramfs that mounts the
# host's root read-only over 9p with a tmpfs overlay. Idempotent; prints the guest's directory.
# Handles what Debian's kernel packages have been: modules under /lib or /usr/lib, plain or
# compressed (.ko.xz, .ko.zst), a bzImage wrapping xz or zstd, one package or binary+modules+base.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Outside the clone, beside SDL 3's build (tools/build-sdl3.sh): a fresh clone on this machine
# (CI's) boots the kernels already unpacked instead of fetching 800 MB again.
out=${PADGATE_GUEST_DIR:-${PADGATE_CACHE_DIR:-/var/cache/padgate}/guest}
name=${PADGATE_GUEST_KERNEL:-6.12}

. "$root/tools/apt-packages.sh"

line=$(awk -v n="$name" '$1 == n' "$here/kernels.conf")
[ -n "$line" ] || { echo "guest: no kernel named '$name' in tools/guest/kernels.conf (names: $(awk '!/^#/ && NF {printf "%s ", $1}' "$here/kernels.conf"))" >&2; exit 2; }
read -r _ suite pinned <<< "$line"
dir="$out/$name"

# iproute2 for the lossy-link test's network namespaces (the guest runs the host's binaries);
# zstd and xz-utils for the kernel images and modules.
install_host_packages() {
    install_packages guest qemu-system-x86 busybox-static cpio kmod udev xz-utils zstd iproute2
}

# A private apt for the suite: the system's sources and lists stay as they are.
apt_dir="$out/apt/$suite"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1)
private_apt() {
    if [ ! -f "$apt_dir/.updated" ]; then
        mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
        echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" > "$apt_dir/sources.list"
        apt-get "${apt_opts[@]}" update -qq >/dev/null
        touch "$apt_dir/.updated"
    fi
    "$@" "${apt_opts[@]}"
}

# The suite's current build of its kernel line, as the packages that carry it.
current_packages() {
    local ver
    ver=$(private_apt apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{sub("linux-image-", "", $2); print $2; exit}')
    [ -n "$ver" ] || return 1
    if private_apt apt-cache show "linux-image-$ver-unsigned" >/dev/null 2>&1 && \
       ! private_apt apt-cache show "linux-binary-unsigned-$ver" >/dev/null 2>&1; then
        echo "linux-image-$ver-unsigned"
    else
        echo "linux-binary-unsigned-$ver linux-modules-$ver linux-base-$ver"
    fi
}

fetch_kernel() {
    [ -f "$dir/kernel/.done" ] && return
    rm -rf "$dir/kernel" "$dir/deb" && mkdir -p "$dir/kernel" "$dir/deb"
    local packages=$pinned
    # shellcheck disable=SC2086
    if ! (cd "$dir/deb" && private_apt apt-get download $packages >/dev/null 2>&1); then
        rm -f "$apt_dir/.updated"   # an old list: read the suite again before giving up on the pin
        if ! (cd "$dir/deb" && private_apt apt-get download $packages >/dev/null 2>&1); then
            packages=$(current_packages) || { echo "guest: no kernel found in $suite" >&2; exit 1; }
            echo "guest: WARNING pinned kernel '$pinned' is no longer in $suite; using $packages (pin it in tools/guest/kernels.conf)" >&2
            (cd "$dir/deb" && private_apt apt-get download $packages >/dev/null)
        fi
    fi
    for deb in "$dir"/deb/*.deb; do dpkg-deb -x "$deb" "$dir/kernel"; done
    rm -rf "$dir/deb"
    # usr-merged packages put modules under usr/lib/modules: keep them in lib/modules, with
    # usr/lib/modules pointing there, so the host's depmod -b finds them wherever its kmod looks
    # (Debian 12's kmod reads lib/modules, later ones may read usr/lib/modules).
    if [ -d "$dir/kernel/usr/lib/modules" ] && [ ! -L "$dir/kernel/usr/lib/modules" ]; then
        mkdir -p "$dir/kernel/lib/modules"
        cp -a "$dir/kernel/usr/lib/modules/." "$dir/kernel/lib/modules/"
        rm -rf "$dir/kernel/usr/lib/modules"
    fi
    mkdir -p "$dir/kernel/usr/lib"
    [ -e "$dir/kernel/usr/lib/modules" ] || ln -s ../../lib/modules "$dir/kernel/usr/lib/modules"
    local ver
    ver=$(ls "$dir/kernel/lib/modules")
    [ "$(echo "$ver" | wc -l)" = 1 ] || { echo "guest: expected one kernel in $dir/kernel/lib/modules, found: $ver" >&2; exit 1; }
    depmod -b "$dir/kernel" "$ver"
    echo "$ver" > "$dir/kernel/.version"
    echo "$packages" > "$dir/kernel/.packages"
    touch "$dir/kernel/.done"
}

kernel_image() {
    local ver=$1 image
    for image in "$dir/kernel/boot/vmlinuz-$ver" "$dir/kernel/lib/modules/$ver/vmlinuz" "$dir/kernel/lib/modules/$ver/vmlinuz.unsigned"; do
        [ -f "$image" ] && { echo "$image"; return; }
    done
    echo "guest: no kernel image in $dir/kernel" >&2; exit 1
}

# The bzImage wraps a compressed ELF; QEMU boots the ELF directly (PVH), twice as fast.
extract_vmlinux() {
    [ -f "$dir/vmlinux" ] && return
    local ver image magic tool offset
    ver=$(cat "$dir/kernel/.version")
    image=$(kernel_image "$ver")
    for pair in '\xFD7zXZ\x00:xz' '\x28\xB5\x2F\xFD:zstd' '\x1F\x8B\x08:gzip'; do
        magic=${pair%:*}; tool=${pair##*:}
        for offset in $(LC_ALL=C grep -obUaP "$magic" "$image" | cut -d: -f1 | head -3); do
            tail -c +"$((offset + 1))" "$image" | "$tool" -dc 2>/dev/null > "$dir/vmlinux.tmp" || true
            if [ "$(head -c 4 "$dir/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = "7f454c46" ]; then
                mv "$dir/vmlinux.tmp" "$dir/vmlinux"; return
            fi
        done
    done
    echo "guest: could not unpack the ELF inside $image; booting the bzImage (slower)" >&2
    rm -f "$dir/vmlinux.tmp"; cp "$image" "$dir/vmlinux"
}

build_initramfs() {
    [ -f "$dir/initrd.cpio.gz" ] && [ "$dir/initrd.cpio.gz" -nt "$here/init" ] && return
    local ver stage ko
    ver=$(cat "$dir/kernel/.version")
    stage=$(mktemp -d)
    mkdir -p "$stage"/{bin,dev,proc,sys,newroot,lower,upper,mods}
    cp /bin/busybox "$stage/bin/busybox"
    # Built-in ones are left out by --show-depends ("builtin …" lines).
    for m in virtio_pci 9pnet_virtio 9p overlay; do
        modprobe -d "$dir/kernel" -S "$ver" --show-depends "$m" | awk '$1=="insmod"{print $2}'
    done | awk '!seen[$0]++' > "$stage/mods/list"
    : > "$stage/mods/order"
    # busybox's insmod takes plain modules only.
    while read -r ko; do
        base=$(basename "$ko")
        case "$ko" in
            *.ko.xz) xz -dc "$ko" > "$stage/mods/${base%.xz}"; base=${base%.xz} ;;
            *.ko.zst) zstd -qdc "$ko" > "$stage/mods/${base%.zst}"; base=${base%.zst} ;;
            *.ko.gz) gzip -dc "$ko" > "$stage/mods/${base%.gz}"; base=${base%.gz} ;;
            *) cp "$ko" "$stage/mods/" ;;
        esac
        echo "$base" >> "$stage/mods/order"
    done < "$stage/mods/list"
    rm "$stage/mods/list"
    cp "$here/init" "$stage/init"; chmod +x "$stage/init"
    echo "$ver" > "$stage/kver"
    echo "$dir/kernel/lib/modules/$ver" > "$stage/modpath"
    (cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$dir/initrd.cpio.gz"
    rm -rf "$stage"
}

install_host_packages >&2
mkdir -p "$dir"
fetch_kernel
extract_vmlinux
build_initramfs
echo "guest: ready ($name: $(cat "$dir/kernel/.version")) in $dir" >&2
echo "$dir"
