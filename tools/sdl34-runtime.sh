#!/usr/bin/env bash
# SDL 3.4 for the device tests that need a driver SDL 3.2 lacks (the Steam Controller's,
# SDL_hidapi_steam_triton.c): Debian sid's libsdl3 binary package as Debian ships it, run with
# sid's own C library, since sid's SDL needs glibc 2.43 (Debian 12 has 2.36) and the archive this
# project reaches serves sid's binaries but not their sources (docs/pad-families.md).
#
# A private apt configuration (its own sources.list, lists, cache and an empty dpkg status, so
# apt fetches the whole dependency closure) downloads libsdl3-0, libsdl3-dev and libudev1 from
# sid; the libraries libSDL3.so.0 loads (its DT_NEEDED closure, as sid's loader resolves it, and
# libudev, which SDL opens at run time) are kept with sid's loader in a cache outside the clone.
# Tests/SDLProbe/sdl3-probe.c is built against sid's headers into .build/sdl34-probe.bin, and
# .build/sdl34-probe runs it through sid's loader with that library directory.
#
# The cache is ${PADGATE_CACHE_DIR:-/var/cache/padgate}/sdl3-sid-VERSION/ (VERSION: what sid
# offered when it was made); a complete one is reused and the network is not touched. sid keeps
# only its current version, so nothing is pinned: any SDL 3.4 or later does.
set -euo pipefail
cd "$(dirname "$0")/.."
cache_root=${PADGATE_CACHE_DIR:-/var/cache/padgate}
. tools/apt-packages.sh

install_packages sdl34 dpkg-dev gcc binutils
existing=$(ls -d "$cache_root"/sdl3-sid-*/.complete 2>/dev/null | sort -V | tail -1 || true)
if [ -n "$existing" ]; then
    prefix=$(dirname "$existing")
else
    mkdir -p "$cache_root"
    work=$(mktemp -d "$cache_root/.sdl34-work.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/root"
    : > "$work/status"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" > "$work/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "Dir::State::status=$work/status"
              -o APT::Sandbox::User=root -o APT::Install-Recommends=false -o Debug::NoLocking=1)
    apt-get "${apt_opts[@]}" -qq update
    version=$(apt-cache "${apt_opts[@]}" show libsdl3-0 2>/dev/null | awk '/^Version: /{print $2}' | sort -V | tail -1 || true)
    [ -n "$version" ] || { echo "sdl34: sid offers no libsdl3-0" >&2; exit 1; }
    dpkg --compare-versions "$version" ge 3.4 || { echo "sdl34: sid's libsdl3 is $version; the tests need 3.4 or later" >&2; exit 1; }
    # apt checks every file against sid's signed index.
    # The libraries with their closure; the headers alone (libsdl3-dev's own closure is the
    # whole desktop's -dev packages).
    apt-get "${apt_opts[@]}" -qq -y install --download-only libsdl3-0 libudev1 >/dev/null
    (cd "$work/cache/archives" && apt-get "${apt_opts[@]}" -qq download libsdl3-dev)
    for deb in "$work"/cache/archives/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
    lib=$work/root/usr/lib/x86_64-linux-gnu
    loader=$lib/ld-linux-x86-64.so.2
    [ -x "$loader" ] && [ -e "$lib/libSDL3.so.0" ] || { echo "sdl34: sid's packages lack the loader or libSDL3" >&2; exit 1; }
    search=$lib:$work/root/lib/x86_64-linux-gnu:$lib/pulseaudio
    prefix=$cache_root/sdl3-sid-$version
    staging=$work/prefix
    mkdir -p "$staging/lib" "$staging/include"
    # What sid's loader resolves for SDL and for libudev, each from sid's tree (a library from
    # this machine would be a sign the closure is incomplete).
    resolved=$("$loader" --library-path "$search" --list "$lib/libSDL3.so.0")
    resolved+=$'\n'$("$loader" --library-path "$search" --list "$lib/libudev.so.1")
    outside=$(awk -v tree="$work/root/" '$2 == "=>" && (index($3, tree) != 1 || $3 == "not")' <<< "$resolved")
    [ -z "$outside" ] || { echo "sdl34: libraries not found in sid's tree:" >&2; echo "$outside" >&2; exit 1; }
    awk '$2 == "=>" {print $1, $3}' <<< "$resolved" | sort -u | while read -r name path; do
        cp -L "$path" "$staging/lib/$name"
    done
    cp -L "$loader" "$staging/lib/ld-linux-x86-64.so.2"
    cp -L "$lib/libSDL3.so.0" "$lib/libudev.so.1" "$staging/lib/"
    cp -r "$work/root/usr/include/SDL3" "$staging/include/"
    echo "$version" > "$staging/.complete"
    # A complete directory or none: a half-made one under the final name is never left.
    rm -rf "$prefix"
    mv -T "$staging" "$prefix"
    echo "sdl34: sid's SDL $version with its $(ls "$prefix/lib" | wc -l) libraries in $prefix"
fi

mkdir -p .build
out=.build/sdl34-probe
if [ ! -x "$out.bin" ] || [ Tests/SDLProbe/sdl3-probe.c -nt "$out.bin" ] || [ Tests/SDLProbe/probe-common.h -nt "$out.bin" ] || [ "$prefix/.complete" -nt "$out.bin" ]; then
    # Linked against sid's libSDL3 by path; its own needs are resolved when it runs, by sid's loader.
    cc -O1 -g -D_GNU_SOURCE -Wall -Werror -o "$out.bin" Tests/SDLProbe/sdl3-probe.c -I"$prefix/include" "$prefix/lib/libSDL3.so.0" -Wl,--allow-shlib-undefined
fi
# The launcher the tests run: the probe under sid's loader, with sid's libraries only.
printf '#!/bin/bash\nexec %q --library-path %q %q "$@"\n' "$prefix/lib/ld-linux-x86-64.so.2" "$prefix/lib" "$PWD/$out.bin" > "$out.tmp"
chmod +x "$out.tmp"
mv "$out.tmp" "$out"
