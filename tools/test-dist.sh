#!/usr/bin/env bash
# The tarball as a user of another distribution gets it (make test-dist; part of make test through
# tools/test-package.sh): unpacked in a Debian 13 root that has a desktop's base libraries but no
# Swift toolchain, apt package of padgate's or build tools, it loads every library (ldd finds
# each), runs --version, list, doctor (which fails there, as no uhid: it must say so and exit 1)
# and the in-process demo, and install.sh --prefix, --user and --uninstall put and take its files.
# The glibc floor is checked again here, on the unpacked files. Needs root (chroot, mounts).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. tools/apt-packages.sh
install_packages padgate debootstrap binutils
tarball=${1:-}
if [ -z "$tarball" ]; then make -s release >/dev/null; tarball=$(tools/make-dist.sh "$(swift build -c release --show-bin-path)/padgate" | tail -1); fi
fail() { echo "test-dist: FAIL: $*" >&2; exit 1; }

# The root: Debian 13 minbase plus what every desktop has (ALSA, udev, OpenSSL 3, D-Bus); cached.
cache=${PADGATE_CACHE:-/var/cache/padgate}/trixie-root.tar
if [ ! -f "$cache" ]; then
    build=$(mktemp -d)
    debootstrap --variant=minbase --include=libasound2t64,libudev1,libssl3t64,libdbus-1-3,zlib1g,libstdc++6 \
        trixie "$build/root" http://deb.debian.org/debian >/dev/null || { rm -rf "$build"; fail "debootstrap of trixie failed"; }
    mkdir -p "$(dirname "$cache")"
    tar -C "$build/root" -cf "$cache.part" . && mv "$cache.part" "$cache"
    rm -rf "$build"
fi
work=$(mktemp -d)
root=$work/root
cleanup() {
    for m in dev sys proc; do umount -l "$root/$m" 2>/dev/null || true; done
    rm -rf --one-file-system "$work"
}
trap cleanup EXIT
mkdir -p "$root"
tar -C "$root" -xf "$cache"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
[ ! -e "$root/opt/swift" ] && ! chroot "$root" sh -c 'command -v swift' >/dev/null || fail "the root has a Swift toolchain"
tar -C "$root/tmp" -xzf "$tarball"
dir=/tmp/$(basename "$tarball" .tar.gz)
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

# Symbol versions and sonames.
for file in "$root$dir/bin/padgate" "$root$dir"/lib/padgate/*; do
    newest=$(objdump -T "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -Vu | tail -1)
    [ "$(printf '%s\n2.36\n' "$newest" | sort -V | tail -1)" = 2.36 ] || fail "${file#"$root"} needs GLIBC_$newest (above 2.36)"
done
libraries=$(in_root ldd "$dir/bin/padgate")
! grep -q "not found" <<< "$libraries" || fail "missing libraries: $(grep 'not found' <<< "$libraries" | tr -s ' \t' ' ')"
grep -q "libswift" <<< "$libraries" && fail "the binary loads a Swift library: $libraries"
bundled=$(awk '/=>/ && $3 ~ /lib\/padgate\// { print $1 }' <<< "$libraries" | sort | paste -sd' ' -)
[ -n "$bundled" ] || fail "no library was loaded from the tarball's lib/padgate"

# The commands.
version=$(in_root "$dir/bin/padgate" --version) || fail "--version"
in_root "$dir/bin/padgate" list >/dev/null || fail "list"
rc=0; doctor=$(in_root "$dir/bin/padgate" doctor) || rc=$?
[ $rc = 1 ] || fail "doctor exited $rc in a root without uhid (expected 1): $doctor"
grep -q "^FAILED  uhid" <<< "$doctor" || fail "doctor did not say uhid is missing: $doctor"
in_root "$dir/bin/padgate" demo --devices in-process --duration 2 >/dev/null 2>&1 || fail "demo --devices in-process"

# install.sh: system-wide under a prefix, per user, and back out.
in_root sh "$dir/install.sh" --prefix /opt/padgate >/dev/null || fail "install.sh --prefix /opt/padgate"
[ "$(in_root /opt/padgate/bin/padgate --version)" = "$version" ] || fail "the installed binary does not run"
grep -qx "ExecStart=/opt/padgate/bin/padgate serve" "$root/etc/systemd/system/padgate-serve.service" || fail "the service unit names another binary"
cmp -s udev/70-padgate.rules "$root/etc/udev/rules.d/70-padgate.rules" || fail "the udev rules were not installed"
[ -f "$root/etc/systemd/user/padgate-forward.service" ] || fail "no forward user unit"
in_root sh "$dir/install.sh" --prefix /opt/padgate --uninstall >/dev/null || fail "install.sh --uninstall"
left=$(find "$root/opt/padgate" "$root/etc/udev/rules.d" "$root/etc/systemd" -name '*padgate*' -type f 2>/dev/null)
[ -z "$left" ] || fail "--uninstall left $left"
user_out=$(in_root sh "$dir/install.sh" --user) || fail "install.sh --user"
[ "$(in_root /root/.local/bin/padgate --version)" = "$version" ] || fail "the user's binary does not run"
grep -qx "ExecStart=/root/.local/bin/padgate forward --quiet \$PADGATE_HOST" "$root/root/.config/systemd/user/padgate-forward.service" || fail "the user unit names another binary"
grep -q "sudo install -m 0644 '/root/.local/share/padgate/70-padgate.rules' /etc/udev/rules.d/" <<< "$user_out" || fail "--user did not spell out the root step: $user_out"
[ ! -e "$root/etc/udev/rules.d/70-padgate.rules" ] || fail "--user wrote to /etc"

echo "test-dist: $(basename "$tarball") ($(du -h "$tarball" | cut -f1)) runs in Debian 13 without the toolchain (version $version); bundled: $bundled; list, doctor (exit 1: no uhid), demo, install.sh --prefix, --user, --uninstall"
