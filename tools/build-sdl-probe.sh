#!/usr/bin/env bash
# Builds Tests/SDLProbe/sdl-probe.c against the system's libsdl2 (Debian's libsdl2-dev) into
# .build/sdl-probe, for the device tests that look at padgate's pads the way a game does.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/apt-packages.sh
install_packages test libsdl2-dev python3-evdev usbutils alsa-utils
mkdir -p .build
out=.build/sdl-probe
if [ ! -x "$out" ] || [ Tests/SDLProbe/sdl-probe.c -nt "$out" ] || [ Tests/SDLProbe/probe-common.h -nt "$out" ]; then
    # shellcheck disable=SC2046
    cc -O1 -g -D_GNU_SOURCE -Wall -Werror -o "$out" Tests/SDLProbe/sdl-probe.c $(sdl2-config --cflags --libs)
fi
