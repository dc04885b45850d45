import HIDCodecs
import PadDevices
import PadSystem
import WireProtocol

/// The Steam Controller (2026; 28de:1302-1305): no kernel driver before 7.3 (hid-generic), so it is
/// read through its vendor interface's hidraw node with its own codec, as the Deck is. Its reports
/// decode (`inspect`, `record`, `calibrate FILE.hid`); the host's rumble plays as its own report
/// 0x80 and its trackpads' pulses as 0x81. The host shows it as a Steam Deck, the nearest pad with
/// the same controls that the kernel and SDL drive today, or as itself for SDL 3.4 on (`serve
/// --show steam-controller=itself`; docs/pad-families.md).
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

    /// The host's trackpad pulses (a game's or Steam's, to the host's Deck) as its own report 0x81.
    public func trackpadPulses(for pad: Pad) throws -> (any TrackpadPulseOutput)? {
        guard let hidraw = pad.hidraw else { return nil }
        return try SteamControllerPulses(hidraw: hidraw)
    }

    /// A Steam Deck's controls: the same buttons, grips, sticks with touch, trackpads with pressure
    /// and IMU, which hid-steam (6.3 on), Steam and SDL 3's Deck driver open; SDL's own driver for
    /// this controller is in 3.4 only. Where hid-steam does not drive Decks, an Xbox 360 pad.
    public func hostPad(for arrival: PadArrival, transport: VirtualPadTransport) throws -> (any VirtualPad)? {
        try SteamDeckVirtualPad(arrival: arrival)
    }

    static let asDeck = HostStyle(name: "deck", summary: "a Steam Deck's controls (hid-steam, Steam, SDL 3's Deck driver)")
    static let asItself = HostStyle(name: "itself", summary: "a Steam Controller through uhid (hid-generic; SDL 3.4's own driver opens it)")
    public var hostStyles: [HostStyle] { [Self.asDeck, Self.asItself] }

    public func hostPad(for arrival: PadArrival, transport: VirtualPadTransport, style: HostStyle) throws -> (any VirtualPad)? {
        style == Self.asItself ? try SteamControllerVirtualPad(arrival: arrival) : try hostPad(for: arrival, transport: transport)
    }

    /// Lizard mode off (its state reports come only then) and the IMU on as it is opened, lizard
    /// mode off again every 3 s (it falls back 8 s after the last), as SDL and Steam do. When
    /// `forward` lets go, the controller is a mouse and keyboard again by itself.
    public func hidrawUpkeep(for pad: Pad) -> HidrawUpkeep? {
        HidrawUpkeep(atOpen: [SteamControllerCommands.lizardModeOff, SteamControllerCommands.imuOn],
                     repeating: [SteamControllerCommands.lizardModeOff], every: SteamControllerCommands.lizardModeResend,
                     lapse: "it falls back to its lizard mode (a mouse and keyboard) about 8 s after the last")
    }

    public var emulatedModels: [EmulatedModel] { [EmulatedModel(name: PadKind.steamController.name, kind: .steamController)] }

    public func emulate(_ model: EmulatedModel, bus: PadBus, transport: VirtualPadTransport,
                        onOutput: (@Sendable ([UInt8]) -> Void)?) throws -> any EmulatedPad {
        try EmulatedSteamController()
    }

    /// A report a program sent the controller (its id first).
    public func describeOutput(_ report: [UInt8]) -> String {
        if let speeds = SteamControllerCommands.rumbleSpeeds(report) { return "rumble strong \(speeds.low) weak \(speeds.high) (of 65535)" }
        if let p = SteamControllerCommands.pulse(report) {
            return "pulses on the \(p.pad) trackpad: \(p.count) × \(p.onMicros) µs on, \(p.offMicros) µs off"
        }
        if let values = SteamControllerCommands.settingValues(report) {
            return "settings " + values.map { "\($0.setting)=0x\(String($0.value, radix: 16))" }.joined(separator: " ")
        }
        guard let id = report.first else { return "an empty report" }
        return "report 0x\(String(id, radix: 16)) (\(report.count) bytes)"
    }

    public func readingNote(for pad: Pad) -> String? {
        "read from its HID interface through hidraw (hid-generic gives it only a lizard mouse and keyboard), lizard mode off while forwarded; rumble and trackpad pulses come back; its host pad is a Steam Deck where the host's kernel drives one (6.3 on)"
    }
}
