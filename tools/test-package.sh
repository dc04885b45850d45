#!/usr/bin/env bash
# The host service as it is installed: the unit passes `systemd-analyze verify` and its offline
# security exposure stays within docs/service.md's bound; `make install DESTDIR=…` lays out every
# file and `make uninstall` takes every one away; the .deb's binary has no Swift library in `ldd`
# and runs with the toolchain hidden; the tarball for other distributions (make dist) runs in a Debian
# 13 root without the toolchain (tools/test-dist.sh). Part of `make test`.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. tools/apt-packages.sh
install_packages padgate dpkg-dev binutils
swift=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
debug_bin="$($swift build --show-bin-path)/padgate"
[ -x "$debug_bin" ] || { echo "build first: swift build" >&2; exit 1; }
max_exposure=2.5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test-package: FAIL: $*" >&2; exit 1; }

# 1. The unit, with ExecStart pointing at a real binary.
unit="$work/padgate-serve.service"
sed "s|@BINDIR@|$(dirname "$debug_bin")|" udev/padgate-serve.service.in > "$unit"
verify=$(systemd-analyze verify --man=no "$unit" 2>&1 | grep -v -E "Failed to (open|put) .*(padgate|dbus|bus)|is not a valid|network-online.target|systemd-modules-load" || true)
[ -z "$verify" ] || fail "systemd-analyze verify: $verify"
exposure=$(systemd-analyze security --offline=true "$unit" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$exposure" ] || fail "systemd-analyze security gave no exposure level"
awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }' || fail "the unit's exposure is $exposure, above $max_exposure"
echo "test-package: unit verified; exposure $exposure (at most $max_exposure)"

# 2. make install / uninstall into a staging root.
stage="$work/stage"
make -s install DESTDIR="$stage" PADGATE_BIN="$debug_bin" PREFIX=/usr/local >/dev/null
expected="/etc/modules-load.d/padgate.conf
/etc/systemd/system/padgate-serve.service
/etc/sysusers.d/padgate.conf
/etc/udev/rules.d/70-padgate.rules
/etc/udev/rules.d/71-padgate-serve.rules
/usr/local/bin/padgate
/usr/local/share/bash-completion/completions/padgate
/usr/local/share/fish/vendor_completions.d/padgate.fish
/usr/local/share/man/man1/padgate.1.gz
/usr/local/share/zsh/site-functions/_padgate"
laid=$(cd "$stage" && find . -type f | sed 's|^\.||' | sort)
[ "$laid" = "$expected" ] || fail "make install laid out:
$laid
expected:
$expected"
grep -q "ExecStart=/usr/local/bin/padgate serve" "$stage/etc/systemd/system/padgate-serve.service" || fail "the installed unit does not run the installed binary"
for f in /usr/local/share/bash-completion/completions/padgate /usr/local/share/fish/vendor_completions.d/padgate.fish /usr/local/share/zsh/site-functions/_padgate; do
    grep -q "serve" "$stage$f" || fail "$f does not complete subcommands"
done
# Whole, then searched: grep -q leaves at its first match, and a zcat still writing would die of
# SIGPIPE, which pipefail reports as a failure.
zcat "$stage/usr/local/share/man/man1/padgate.1.gz" > "$work/padgate.1"
grep -q '^\.SS padgate forward' "$work/padgate.1" || fail "the man page has no 'padgate forward' section"
make -s uninstall DESTDIR="$stage" PREFIX=/usr/local >/dev/null
left=$(cd "$stage" && find . -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "test-package: make install DESTDIR laid out $(echo "$expected" | wc -l) files; make uninstall removed them"

# 3. The .deb: its binary carries Swift's libraries and runs with /opt/swift out of reach.
package=$(make -s deb | tail -1)
[ -f "$package" ] || fail "make deb made no package ($package)"
contents=$(dpkg-deb --contents "$package")
for file in ./usr/bin/padgate ./lib/systemd/system/padgate-serve.service ./lib/udev/rules.d/70-padgate.rules \
            ./usr/lib/sysusers.d/padgate.conf ./usr/share/man/man1/padgate.1.gz; do
    grep -q " $file\$" <<<"$contents" || fail "the package has no $file"
done
dpkg-deb -x "$package" "$work/deb"
libraries=$(ldd "$work/deb/usr/bin/padgate")
if echo "$libraries" | grep -q -i "swift\|not found"; then fail "the packaged binary needs: $(echo "$libraries" | grep -i 'swift\|not found')"; fi
hidden=$(unshare -m sh -c "mount -t tmpfs none /opt/swift 2>/dev/null || true; env -i PATH=/usr/bin:/bin '$work/deb/usr/bin/padgate' --version") \
    || fail "the packaged binary did not run with /opt/swift hidden"
env -i PATH=/usr/bin:/bin "$work/deb/usr/bin/padgate" lightbar 1 2 3 --dry-run --bus usb | grep -q "^0200" || fail "the packaged binary does not work"
echo "test-package: $(basename "$package"): $(du -h "$package" | cut -f1), runs without the toolchain (version $hidden); ldd:"
echo "$libraries" | awk '{print "  " $1}'

# 4. The tarball for other distributions (make dist), in a Debian 13 root (tools/test-dist.sh).
tarball=$(make -s dist | tail -1)
[ -f "$tarball" ] || fail "make dist made no tarball ($tarball)"
tools/test-dist.sh "$tarball"
