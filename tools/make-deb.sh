#!/usr/bin/env bash
# Builds padgate_VERSION_ARCH.deb from a release binary (make deb): the files `make install` lays
# out under Debian's paths, Depends read off the binary's own libraries (each must belong to a
# Debian package: a libswift* there means the toolchain would be needed), and maintainer scripts
# that create the service user and reload udev and systemd. Prints the package's path.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: tools/make-deb.sh PATH/TO/padgate}
out=.build-deb
root=$out/root
rm -rf "$root"
mkdir -p "$root/DEBIAN"
make -s install DESTDIR="$root" PADGATE_BIN="$bin" PREFIX=/usr UDEVDIR=/lib/udev/rules.d \
    MODULESLOADDIR=/usr/lib/modules-load.d UNITDIR=/lib/systemd/system SYSUSERSDIR=/usr/lib/sysusers.d >/dev/null

# Every shared library the binary loads, as the Debian package that ships it.
depends=()
while read -r library; do
    [ -n "$library" ] || continue
    owner=$(dpkg -S "$(readlink -f "$library")" 2>/dev/null | head -1 | cut -d: -f1) \
        || owner=$(dpkg -S "$library" 2>/dev/null | head -1 | cut -d: -f1) || true
    [ -n "$owner" ] || { echo "make-deb: $library belongs to no Debian package (a Swift runtime library?)" >&2; exit 1; }
    depends+=("$owner")
done < <(ldd "$bin" | awk '/=>/ {print $3}')
depends_line=$(printf '%s\n' "${depends[@]}" | sort -u | grep -v '^libc6$' | paste -sd, - | sed 's/,/, /g')

version=$("$bin" --version)
arch=$(dpkg --print-architecture)
size=$(du -sk "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: padgate
Version: $version
Architecture: $arch
Maintainer: padgate developers <padgate@localhost>
Installed-Size: $size
Depends: libc6, $depends_line, systemd, udev
Recommends: avahi-daemon
Section: utils
Priority: optional
Homepage: https://github.com/padgate/padgate
Description: Linux gamepad input and haptics gateway
 Forwards DualSense, DualShock 4, Xbox and other pads to a remote host over an
 encrypted, paired link (the host presents them as virtual pads games see, and
 their rumble, lights and trigger effects come back), tests rumble and trigger
 effects, sets lights, calibrates motion and decodes HID reports.
CONTROL
cat > "$root/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    systemd-sysusers padgate.conf >/dev/null 2>&1 || systemd-sysusers >/dev/null 2>&1 || true
    udevadm control --reload >/dev/null 2>&1 || true
    udevadm trigger --subsystem-match=misc --subsystem-match=hidraw >/dev/null 2>&1 || true
    systemctl daemon-reload >/dev/null 2>&1 || true
fi
SCRIPT
cat > "$root/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = remove ]; then systemctl stop padgate-serve.service >/dev/null 2>&1 || true; fi
SCRIPT
cat > "$root/DEBIAN/postrm" <<'SCRIPT'
#!/bin/sh
set -e
systemctl daemon-reload >/dev/null 2>&1 || true
udevadm control --reload >/dev/null 2>&1 || true
SCRIPT
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
package="$out/padgate_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group -Zxz "$root" "$package" >/dev/null
echo "$package"
