#!/usr/bin/env python3
"""Prints what python-evdev (Debian's python3-evdev) reads of an evdev node, as one JSON object:
identity, event types, key codes, absolute axes with their absinfo, force-feedback codes.
An independent reader for padgate's device tests (Tests/DeviceTests/EvdevConventionTests.swift)."""
import json
import sys

import evdev

device = evdev.InputDevice(sys.argv[1])
capabilities = device.capabilities(absinfo=True)
ecodes = evdev.ecodes
print(json.dumps({
    "name": device.name,
    "phys": device.phys,
    "bustype": device.info.bustype,
    "vendor": device.info.vendor,
    "product": device.info.product,
    "version": device.info.version,
    "ev": sorted(capabilities.keys()),
    "keys": sorted(capabilities.get(ecodes.EV_KEY, [])),
    "abs": {str(code): [info.min, info.max, info.fuzz, info.flat] for code, info in capabilities.get(ecodes.EV_ABS, [])},
    "ff": sorted(capabilities.get(ecodes.EV_FF, [])),
}))
