#!/usr/bin/env bash
# Builds padgate-VERSION-linux-ARCH.tar.gz (make dist) from a release binary: padgate for any Linux
# with glibc 2.36 or newer, without apt or a Swift toolchain (docs/install.md). Swift's runtime is
# linked in (make release); the libraries a desktop distribution may lack ride along in
# lib/padgate/, found through the binary's RPATH; the rest are the system's. Fails on a glibc
# symbol newer than 2.36 (Debian 12). Prints the tarball's path.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. tools/apt-packages.sh
install_packages padgate patchelf binutils >&2
bin=${1:?usage: tools/make-dist.sh PATH/TO/padgate}
# Bundled: packages a minimal or gaming install (SteamOS, a server-less Fedora or Arch) may not
# have. Expected: glibc, libstdc++, libgcc_s, zlib, libudev (systemd), OpenSSL 3, ALSA's libasound,
# D-Bus's libdbus: every desktop distribution since 2022 has these (docs/install.md).
bundled="libhidapi-hidraw.so.0 libevdev.so.2 libopus.so.0 libavahi-client.so.3 libavahi-common.so.3"
glibc_floor=2.36

version=$("$bin" --version)
name=padgate-$version-linux-$(uname -m)
out=.build-dist
root=$out/$name
rm -rf "$root"
mkdir -p "$root/bin" "$root/lib/padgate" "$root/share/padgate"
make -s install DESTDIR="$PWD/$out/stage" PADGATE_BIN="$bin" PREFIX=/p >/dev/null
cp -a "$out/stage/p/share/." "$root/share/"
rm -rf "$out/stage"
install -m 0755 "$bin" "$root/bin/padgate"
for soname in $bundled; do
    path=$(ldd "$bin" | awk -v s="$soname" '$1 == s { print $3 }')
    [ -n "$path" ] || { echo "make-dist: $bin does not load $soname" >&2; exit 1; }
    install -m 0644 "$(readlink -f "$path")" "$root/lib/padgate/$soname"
done
# DT_RPATH (not RUNPATH): it also serves the bundled libraries' own needs (avahi-client's avahi-common).
patchelf --force-rpath --set-rpath '$ORIGIN/../lib/padgate' "$root/bin/padgate"
install -m 0644 udev/70-padgate.rules udev/71-padgate-serve.rules udev/padgate-serve.service.in udev/padgate-forward.service.in "$root/share/padgate/"
install -m 0644 udev/modules-load.d/padgate.conf "$root/share/padgate/modules-load.conf"
install -m 0644 udev/sysusers.d/padgate.conf "$root/share/padgate/sysusers.conf"
install -m 0755 tools/dist/install.sh "$root/install.sh"

# No symbol newer than the floor, in the binary or anything bundled.
for file in "$root/bin/padgate" "$root"/lib/padgate/*; do
    newest=$(objdump -T "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -Vu | tail -1)
    if [ "$(printf '%s\n%s\n' "$newest" "$glibc_floor" | sort -V | tail -1)" != "$glibc_floor" ]; then
        echo "make-dist: ${file#"$root/"} needs GLIBC_$newest, newer than Debian 12's $glibc_floor" >&2; exit 1
    fi
done
tar -C "$out" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
