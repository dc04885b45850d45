#!/usr/bin/env python3
"""The truth the continuous gyro calibration is checked against on real recordings (stdlib only,
written apart from the Swift code on purpose: it reads the report bytes at the offsets
hid-playstation reads and applies the kernel's calibration arithmetic itself).

    tools/rest-truth.py > Tests/HIDCodecsTests/Fixtures/recordings/rest_truth.json

For each recording: the span where the pad is known to lie still (from its source, see the
fixtures' README), the factory calibration from the feature report 0x05 the same pad returned
(kernel convention: gyro bias taken as 0), and over that span, per axis, the mean and standard
deviation of the gyro (deg/s) and the accelerometer (g), and gravity's magnitude. A DualSense USB
input report 0x01: gyro int16 x3 at byte 16, accel int16 x3 at byte 22, sensor clock uint32 at 28
(1/3 us), first touch contact at 33 (bit 7 clear: touching).
"""
import json
import math
import os
import struct

ROOT = os.path.join(os.path.dirname(__file__), '..', 'Tests', 'HIDCodecsTests', 'Fixtures', 'recordings')

RECORDINGS = [
    dict(file='dualsense_usb_djm00n_fw0282_idle.hid',
         feature05='05fdfff8ff0200a02255ddbb2236ddaf2258dd1c021c02e01febdf821f94dfed1fdedf050000000000',
         feature05_source='shared fixtures usb/dualsense_054c_0ce6_fw0282_feature05.bin: the same pad (USB address 7) in the same capture',
         still='the whole recording: the pad lies untouched while a firmware update is prepared (sticks centred, no button, no touch)',
         span=(0.0, None)),
    dict(file='dualsense_edge_usb_dsegde.hid',
         feature05='05fefffcfffeff832278dd92225fdd95226ddd1c021c02f21feddfe320dae0ee1fdfdf0b0000000000',
         feature05_source='shared fixtures usb/dualsense_edge_054c_0df2_fw0154_feature05.bin: an Edge in a capture from the same repository (ROGueENEMY); not known to be the same pad',
         still='the first second, before a finger comes to the touchpad (touch registers at first_touch_s; the pad moves before that)',
         span=(0.0, 1.0)),
]


def calibration(hexstring):
    b = bytes.fromhex(hexstring)
    v = struct.unpack_from('<17h', b, 1)
    gyro_plus_minus = [(v[3], v[4]), (v[5], v[6]), (v[7], v[8])]  # USB layout: interleaved per axis
    speed = v[9] + v[10]
    accel = [(v[11], v[12]), (v[13], v[14]), (v[15], v[16])]
    gyro_axes = [dict(bias=0, numer=speed * 1024, denom=abs(p) + abs(m)) for p, m in gyro_plus_minus]
    accel_axes = []
    for p, m in accel:
        rng = p - m
        accel_axes.append(dict(bias=p - rng // 2, numer=2 * 8192, denom=rng))
    return gyro_axes, accel_axes


def mult_frac(x, numer, denom):
    # The kernel's mult_frac: (x / d) * n + ((x % d) * n) / d, C division truncating toward zero.
    def cdiv(a, b):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    q = cdiv(x, denom)
    r = x - q * denom
    return q * numer + cdiv(r * numer, denom)


def analyse(entry):
    gyro_cal, accel_cal = calibration(entry['feature05'])
    rows, last_stamp, first_touch = [], None, None
    t0 = None
    for line in open(os.path.join(ROOT, entry['file'])):
        if not line.startswith('E:'):
            continue
        parts = line.split()
        data = bytes(int(x, 16) for x in parts[3:])
        if data[0] != 0x01 or len(data) != 64:
            continue
        stamp = struct.unpack_from('<I', data, 28)[0]
        if stamp == last_stamp:
            continue
        t0 = stamp if t0 is None else t0
        t = ((stamp - t0) & 0xffffffff) / 3e6
        last_stamp = stamp
        if first_touch is None and not data[33] & 0x80:
            first_touch = t
        g = struct.unpack_from('<3h', data, 16)
        a = struct.unpack_from('<3h', data, 22)
        gyro = [mult_frac(g[i] - c['bias'], c['numer'], c['denom']) / 1024 for i, c in enumerate(gyro_cal)]
        accel = [mult_frac(a[i] - c['bias'], c['numer'], c['denom']) / 8192 for i, c in enumerate(accel_cal)]
        rows.append((t, gyro, accel))
    start, end = entry['span']
    end = rows[-1][0] if end is None else end
    still = [r for r in rows if start <= r[0] <= end]

    def stats(k):
        n = len(still)
        means = [sum(r[k][i] for r in still) / n for i in range(3)]
        stds = [math.sqrt(sum((r[k][i] - means[i]) ** 2 for r in still) / (n - 1)) for i in range(3)]
        return means, stds
    gyro_mean, gyro_std = stats(1)
    accel_mean, accel_std = stats(2)
    return dict(file=entry['file'], still=entry['still'], span_s=[start, round(end, 6)], samples=len(still),
                total_samples=len(rows), total_s=round(rows[-1][0], 6), first_touch_s=first_touch,
                feature05=entry['feature05'], feature05_source=entry['feature05_source'],
                gyro_bias_dps=[round(x, 6) for x in gyro_mean], gyro_noise_dps=[round(x, 6) for x in gyro_std],
                accel_mean_g=[round(x, 6) for x in accel_mean], accel_noise_g=[round(x, 6) for x in accel_std],
                gravity_g=round(math.sqrt(sum(x * x for x in accel_mean)), 6))


if __name__ == '__main__':
    print(json.dumps(dict(
        about='Ground truth for the continuous gyro calibration on real recordings, computed by tools/rest-truth.py '
              'from the report bytes (not by padgate): over the span the source says the pad lay still, the mean gyro '
              'is its bias in the kernel convention (deg/s), the mean accelerometer reading its gravity (g).',
        recordings=[analyse(e) for e in RECORDINGS]), indent=1))
