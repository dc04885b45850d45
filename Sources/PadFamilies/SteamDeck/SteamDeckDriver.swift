import HIDCodecs
import PadDevices
import PadSystem
import WireProtocol

/// The Steam Deck's built-in controls (28de:1205): `forward` reads its vendor interface through
/// hidraw beside Steam, which holds the same node (hidraw gives every reader every report, and
/// Steam's own virtual pad is never forwarded: `ForeignVirtualPads`). The host shows it as a Deck
/// where hid-steam drives one (`SteamDeckVirtualPad`), else as an Xbox 360 pad (docs/pad-families.md).
public struct SteamDeckDriver: PadDriver {
    public init() {}
    public var kinds: [PadKind] { [.steamDeck] }
    public var readsThroughHidraw: Bool { true }
    public var reportCadence: Duration? { .microseconds(Int64(SteamDeckLayout.reportMicros)) }

    public func inputCodec(for kind: PadKind, descriptor: ReportDescriptor?) -> (any PadInputCodec)? { SteamDeckInputCodec() }

    /// The Deck's IMU has fixed scales and no calibration report; the wire carries its units.
    public func identity(of pad: Pad, hidraw: HIDRawDevice?) -> (calibration: MotionCalibration, wire: PadIdentity) {
        (SteamDeckInputCodec.calibration, PadIdentity())
    }

    /// The Deck's own rumble command (0xEB, a feature report, as hid-steam sends it) through its
    /// controller's hidraw node (no evdev force feedback is there to use: the Deck is found by
    /// that node alone). The Deck holds a level until told otherwise.
    public func ownRumbleSink(for pad: Pad) -> (any RumbleSink)? {
        pad.hidraw.flatMap { try? HIDRawReportRumble(hidraw: $0, channel: .feature, report: SteamDeckCommands.rumble) }
    }

    /// The host's trackpad pulses as the Deck's own command through the same node.
    public func trackpadPulses(for pad: Pad) throws -> (any TrackpadPulseOutput)? {
        guard let hidraw = pad.hidraw else { return nil }
        return try SteamDeckPulses(hidraw: hidraw)
    }

    /// A Deck through uhid where the kernel's hid-steam drives it (6.3 on); before, the error
    /// makes the host show an Xbox 360 pad and say why (`host status`).
    public func hostPad(for arrival: PadArrival, transport: VirtualPadTransport) throws -> (any VirtualPad)? {
        try SteamDeckVirtualPad(arrival: arrival)
    }

    public var emulatedModels: [EmulatedModel] { [EmulatedModel(name: "steam-deck", kind: .steamDeck)] }

    public func emulate(_ model: EmulatedModel, bus: PadBus, transport: VirtualPadTransport,
                        onOutput: (@Sendable ([UInt8]) -> Void)?) throws -> any EmulatedPad {
        try EmulatedSteamDeck()
    }

    /// A command a program sent the Deck (report number 0 first, as hidraw carries it).
    public func describeOutput(_ report: [UInt8]) -> String {
        let command = Array(report.dropFirst())
        guard let opcode = command.first else { return "an empty command" }
        if let levels = SteamDeckCommands.rumbleLevels(command) { return "rumble strong \(levels.strong) weak \(levels.weak) (of 65535)" }
        return "command 0x\(String(opcode, radix: 16)) (\(command.count > 1 ? Int(command[1]) : 0) bytes)"
    }

    public func readingNote(for pad: Pad) -> String? {
        "read from its controller interface through hidraw, beside Steam; its trackpads, back grips and IMU cross, rumble comes back; its host pad is a Deck where the host's kernel drives one (6.3 on)"
    }
}
