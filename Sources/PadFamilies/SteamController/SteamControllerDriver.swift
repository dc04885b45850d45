import HIDCodecs
import PadDevices
import PadSystem
import WireProtocol

/// The Steam Controller (2026; 28de:1302-1305): no kernel driver before 7.3 (hid-generic), so it is
/// read through its vendor interface's hidraw node with its own codec, as the Deck is. Its reports
/// decode (`inspect`, `record`, `calibrate FILE.hid`), and the host's rumble plays as its own
/// report 0x80; the host shows an Xbox 360 pad; the trackpads' pulses and finding it beside
/// hid-generic's lizard nodes are not built yet (docs/pad-families.md).
public struct SteamControllerDriver: PadDriver {
    public init() {}
    public var kinds: [PadKind] { [.steamController] }
    public var readsThroughHidraw: Bool { true }
    /// About 266 reports a second (SDL takes 4032 µs).
    public var reportCadence: Duration? { .microseconds(4032) }

    public func inputCodec(for kind: PadKind, descriptor: ReportDescriptor?) -> (any PadInputCodec)? { SteamControllerInputCodec() }

    /// Its IMU has fixed scales and no calibration report; the wire carries its units.
    public func identity(of pad: Pad, hidraw: HIDRawDevice?) -> (calibration: MotionCalibration, wire: PadIdentity) {
        (SteamControllerInputCodec.calibration, PadIdentity())
    }

    /// Its own rumble report (0x80, an output report) through its hidraw node (hid-generic offers
    /// no force feedback).
    public func ownRumbleSink(for pad: Pad) -> (any RumbleSink)? {
        pad.hidraw.flatMap { try? HIDRawReportRumble(hidraw: $0, channel: .output, report: SteamControllerCommands.rumble) }
    }

    /// Its hardware stops a level within about 50 ms (SDL re-sends every 40, hid-steam every 50).
    public var rumbleHold: Duration? { .milliseconds(50) }

    public func hostPad(for arrival: PadArrival, transport: EmulatedPlayStationPad.Transport) throws -> (any VirtualPad)? { nil }
}
