#!/usr/bin/env bash
# Builds SDL 3 from Debian's own source package (libsdl3, Debian 13 "trixie") into a cache outside
# the clone, then Tests/SDLProbe/sdl3-probe.c against it into .build/sdl3-probe, for the device
# tests that look at padgate's pads the way an SDL 3 game does (Tests/DeviceTests/SDLClientTests.swift).
#
# Debian 12 ships no SDL 3: the source comes through a private apt configuration (its own
# sources.list, lists and cache in a scratch directory) that leaves the system's sources alone.
# Only what the tests use is built (joystick, gamepad, HIDAPI, haptic, sensor, events), as a static
# library, so the probe carries SDL inside it and runs in the test guest as it is.
#
# The build is cached in ${PADGATE_CACHE_DIR:-/var/cache/padgate}/sdl3-VERSION/ (install prefix and
# a stamp file): later runs and fresh clones reuse it and touch neither the network nor the compiler.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pinned source: trixie's SDL 3. If it left the archive, the newest version trixie offers is
# built instead, with a warning.
sdl3_version=3.2.10+ds-1
suite=trixie

cache_root=${PADGATE_CACHE_DIR:-/var/cache/padgate}
. tools/apt-packages.sh

complete() { [ -f "$cache_root/sdl3-$1/.complete" ]; }

build_sdl3() {
    local version=$1 prefix="$cache_root/sdl3-$1"
    (cd "$work/src" && apt-get "${apt_opts[@]}" -qq source --download-only "libsdl3=$version" >/dev/null)
    # apt checked the files against the suite's signed index; dpkg-source applies Debian's patches.
    # (gpgv cannot check the uploader's signature without debian-keyring: apt's check is the one that counts.)
    dpkg-source -q -x "$work"/src/libsdl3_*.dsc "$work/src/sdl" >"$work/unpack.log" 2>&1 || { cat "$work/unpack.log" >&2; return 1; }
    local started=$SECONDS
    # Only the subsystems a game's controller code needs (SDL_UNIX_CONSOLE_BUILD: no video, on
    # purpose); static, so the probe needs no library path. The virtual-joystick driver stays in:
    # 3.2.10's SDL_joystick.c refers to it whatever SDL_VIRTUAL_JOYSTICK says.
    cmake -S "$work/src/sdl" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
        -DCMAKE_INSTALL_LIBDIR=lib -DSDL_STATIC=ON -DSDL_SHARED=OFF -DSDL_TEST_LIBRARY=OFF -DSDL_TESTS=OFF -DSDL_EXAMPLES=OFF \
        -DSDL_INSTALL_DOCS=OFF -DSDL_VENDOR_INFO="Debian $version (padgate tests)" \
        -DSDL_JOYSTICK=ON -DSDL_HAPTIC=ON -DSDL_HIDAPI=ON -DSDL_HIDAPI_JOYSTICK=ON -DSDL_HIDAPI_LIBUSB=OFF -DSDL_SENSOR=ON \
        -DSDL_LIBUDEV=ON -DSDL_AUDIO=OFF -DSDL_VIDEO=OFF -DSDL_GPU=OFF -DSDL_RENDER=OFF -DSDL_CAMERA=OFF -DSDL_DIALOG=OFF \
        -DSDL_TRAY=OFF -DSDL_POWER=OFF -DSDL_DBUS=OFF -DSDL_IBUS=OFF -DSDL_LIBURING=OFF -DSDL_PIPEWIRE=OFF -DSDL_OFFSCREEN=OFF \
        -DSDL_UNIX_CONSOLE_BUILD=ON >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; return 1; }
    nice -n 10 cmake --build "$work/build" -j 2 >"$work/build.log" 2>&1 || { tail -50 "$work/build.log" >&2; return 1; }
    rm -rf "$prefix"
    cmake --install "$work/build" >/dev/null
    echo "$version" > "$prefix/.complete"
    echo "sdl3: built SDL $version in $((SECONDS - started)) s into $prefix"
}

if ! complete "$sdl3_version"; then
    install_packages sdl3 cmake dpkg-dev xz-utils pkg-config libudev-dev gcc make
    mkdir -p "$cache_root"
    work=$(mktemp -d "$cache_root/.sdl3-work.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" > "$work/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root)
    apt-get "${apt_opts[@]}" -qq update
    offered=$(apt-cache "${apt_opts[@]}" showsrc libsdl3 | awk '/^Package: /{p=$2} p=="libsdl3" && /^Version: /{print $2}' | sort -V | tail -1)
    [ -n "$offered" ] || { echo "sdl3: $suite offers no libsdl3 source package" >&2; exit 1; }
    if ! apt-cache "${apt_opts[@]}" showsrc libsdl3 | grep -qxF "Version: $sdl3_version"; then
        echo "sdl3: WARNING: the pinned libsdl3 $sdl3_version left $suite; using $offered instead (update the pin in $0)" >&2
        sdl3_version=$offered
    fi
    complete "$sdl3_version" || build_sdl3 "$sdl3_version"
fi

prefix="$cache_root/sdl3-$sdl3_version"
mkdir -p .build
out=.build/sdl3-probe
if [ ! -x "$out" ] || [ Tests/SDLProbe/sdl3-probe.c -nt "$out" ] || [ Tests/SDLProbe/probe-common.h -nt "$out" ] || [ "$prefix/.complete" -nt "$out" ]; then
    flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --static --cflags --libs sdl3)
    # shellcheck disable=SC2086
    cc -O1 -g -D_GNU_SOURCE -Wall -Werror -o "$out" Tests/SDLProbe/sdl3-probe.c $flags
fi
