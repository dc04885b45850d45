#!/usr/bin/env python3
"""A USB capture's HID input reports as a hid-recorder file (stdlib only).

    tools/usbpcap-to-hid.py CAPTURE.pcap[ng] DEVICE ENDPOINT DESCRIPTOR.bin NAME VID PID > OUT.hid

Every completed interrupt-IN transfer from DEVICE's ENDPOINT (e.g. 132 = 0x84) becomes one `E:` line,
stamped by the capture's own clock relative to the first one; the header carries the report
descriptor (raw bytes, as the device returned it), NAME and `I: 3 VID PID` (USB). Reads pcapng with
LINKTYPE_USBPCAP (Windows USBPcap) or Linux usbmon (LINKTYPE_USB_LINUX / _MMAPPED), and classic pcap.
Used for Tests/HIDCodecsTests/Fixtures/recordings/dualsense_usb_djm00n_fw0282_idle.hid (see the
fixtures' README).
"""
import struct
import sys


def frames(path):
    """(linktype, seconds, frame bytes) for every captured frame."""
    buf = open(path, 'rb').read()
    magic = buf[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\xa1\xb2\xc3\xd4'):
        e = '<' if magic == b'\xd4\xc3\xb2\xa1' else '>'
        linktype = struct.unpack_from(e + 'I', buf, 20)[0]
        off = 24
        while off + 16 <= len(buf):
            sec, usec, incl = struct.unpack_from(e + 'III', buf, off)
            yield linktype, sec + usec / 1e6, buf[off + 16:off + 16 + incl]
            off += 16 + incl
        return
    if magic != b'\x0a\x0d\x0d\x0a':
        raise SystemExit('not pcap or pcapng')
    off, e, interfaces = 0, '<', []
    while off + 12 <= len(buf):
        btype, blen = struct.unpack_from(e + 'II', buf, off)
        if btype == 0x0A0D0D0A:
            e = '<' if buf[off + 8:off + 12] == b'\x4d\x3c\x2b\x1a' else '>'
            btype, blen = struct.unpack_from(e + 'II', buf, off)
        body = buf[off + 8:off + blen - 4]
        if btype == 1:  # interface description: link type, then options (if_tsresol = 9)
            linktype = struct.unpack_from(e + 'H', body, 0)[0]
            resolution, opt = 1e-6, 8
            while opt + 4 <= len(body):
                code, length = struct.unpack_from(e + 'HH', body, opt)
                if code == 0:
                    break
                if code == 9:
                    r = body[opt + 4]
                    resolution = 2.0 ** -(r & 0x7f) if r & 0x80 else 10.0 ** -r
                opt += 4 + (length + 3) // 4 * 4
            interfaces.append((linktype, resolution))
        elif btype == 6:  # enhanced packet
            iface, high, low, caplen, _ = struct.unpack_from(e + 'IIIII', body, 0)
            linktype, resolution = interfaces[iface]
            yield linktype, ((high << 32) | low) * resolution, body[20:20 + caplen]
        off += blen


def input_reports(path, device, endpoint):
    for linktype, t, d in frames(path):
        if linktype == 249:  # USBPcap: completion (info bit 0) of an interrupt transfer (1)
            hlen, _irp, _status, _func, info, _bus, dev, ep, xfer, dlen = struct.unpack_from('<HQIHBHHBBI', d, 0)
            if xfer == 1 and info & 1 and dev == device and ep == endpoint and dlen:
                yield t, d[hlen:hlen + dlen]
        elif linktype in (189, 220):  # usbmon: 'C'ompletion of an interrupt transfer
            (_id, typ, xfer, ep, dev, _bus, _fs, _fd, _s, _us, _status, _length, lencap) = struct.unpack_from('<QcBBBHccqiiII', d, 0)
            header = 64 if linktype == 220 else 48
            if typ == b'C' and xfer == 1 and dev == device and ep == endpoint and lencap:
                yield t, d[header:header + lencap]


def main():
    if len(sys.argv) != 8:
        raise SystemExit(__doc__)
    path, device, endpoint, descriptor, name, vid, pid = sys.argv[1:]
    rdesc = open(descriptor, 'rb').read()
    out = sys.stdout
    out.write('R: %d %s\n' % (len(rdesc), ' '.join('%02x' % b for b in rdesc)))
    out.write('N: %s\n' % name)
    out.write('I: 3 %s %s\n' % (vid, pid))
    first = None
    for t, data in input_reports(path, int(device), int(endpoint)):
        first = t if first is None else first
        dt = max(0.0, t - first)
        sec = int(dt)
        usec = int(round((dt - sec) * 1e6))
        if usec == 1000000:
            sec, usec = sec + 1, 0
        out.write('E: %06d.%06d %d %s\n' % (sec, usec, len(data), ' '.join('%02x' % b for b in data)))


if __name__ == '__main__':
    main()
