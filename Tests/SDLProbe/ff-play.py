#!/usr/bin/env python3
"""Uploads one FF_RUMBLE effect to an evdev node with python-evdev and plays it once, then keeps
the node open (so nothing erases the effect) for HOLD seconds: what a game's force feedback does.
  ff-play.py NODE STRONG WEAK LENGTH_MS [HOLD_S]"""
import sys
import time

import evdev
from evdev import ecodes, ff

node, strong, weak, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
hold = float(sys.argv[5]) if len(sys.argv) > 5 else 3.0
device = evdev.InputDevice(node)
effect = ff.Effect(ecodes.FF_RUMBLE, -1, 0, ff.Trigger(0, 0), ff.Replay(length, 0),
                   ff.EffectType(ff_rumble_effect=ff.Rumble(strong_magnitude=strong, weak_magnitude=weak)))
effect_id = device.upload_effect(effect)
device.write(ecodes.EV_FF, effect_id, 1)
print("played", flush=True)
time.sleep(hold)
