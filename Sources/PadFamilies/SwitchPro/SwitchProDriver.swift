import HIDCodecs
import Logging
import PadDevices
import PadSystem
import WireProtocol

/// The Switch Pro Controller (hid-nintendo; SDL_hidapi_switch.c), read through evdev (the driver
/// owns its handshake) and shown by the host as itself through uhid.
public struct SwitchProDriver: PadDriver {
    public init() {}
    public var kinds: [PadKind] { [.switchPro] }
    /// The codec reads recordings (`inspect`); `forward` reads the pad through evdev, where
    /// hid-nintendo has made the handshake and applied the SPI calibration to sticks and motion.
    public func inputCodec(for kind: PadKind, descriptor: ReportDescriptor?) -> (any PadInputCodec)? { SwitchProInputCodec() }
    /// Full reports every 15 ms once the host asked for them (subcommand 0x03, 0x30), idle or not
    /// (hid-nintendo's comment: 15 ms).
    public var reportCadence: Duration? { Self.cadence }
    static let cadence: Duration = .milliseconds(15)
    /// The player's one light of four, as hid-nintendo lights player 1 to 4 (the client writes
    /// the mask's bits to the pad's player LEDs in order).
    public func playerLights(_ number: Int) -> (mask: UInt8?, color: RGBColor?) { (1 << UInt8((max(number, 1) - 1) % 4), nil) }

    /// Read through evdev: its calibration blocks from its SPI flash, through hidraw beside
    /// hid-nintendo, so the host's pad reads sticks and motion through the same calibration
    /// (docs/pad-families.md). Read through hidraw: nothing (the reads would race the pad's input).
    public func identity(of pad: Pad, hidraw: HIDRawDevice?) -> (calibration: MotionCalibration, wire: PadIdentity) {
        guard hidraw == nil, let path = pad.hidraw else { return (.nominal, PadIdentity()) }
        do {
            let calibration = try SwitchProSPI.readCalibration(hidraw: path)
            return (.nominal, PadIdentity(calibration: FeatureReportBytes(calibration.factory) ?? .init(), firmware: FeatureReportBytes(calibration.user) ?? .init()))
        } catch {
            Logger(label: "padgate.client").warning("\(pad.name): no SPI calibration (\(error)); the host's pad uses its defaults")
            return (.nominal, PadIdentity())
        }
    }

    /// Said, not silent (docs/pad-families.md): its calibration travels, read from its SPI flash.
    public func readingNote(for pad: Pad) -> String? {
        pad.hidraw == nil ? nil : "through evdev: hid-nintendo owns its handshake; its SPI calibration goes to the host"
    }

    public func hostPad(for arrival: PadArrival, transport: VirtualPadTransport) throws -> (any VirtualPad)? {
        try SwitchProVirtualPad(arrival: arrival)
    }

    /// Client: the HD rumble through hidraw beside hid-nintendo, with the signal's frequency.
    public func hapticsOutput(for pad: Pad) throws -> (any HapticsOutput)? {
        guard let hidraw = pad.hidraw else { return nil }
        return SwitchProHaptics(hidraw: hidraw)
    }

    public var emulatedModels: [EmulatedModel] { [EmulatedModel(name: PadKind.switchPro.name, kind: .switchPro)] }

    public func emulate(_ model: EmulatedModel, bus: PadBus, transport: VirtualPadTransport,
                        onOutput: (@Sendable ([UInt8]) -> Void)?) throws -> any EmulatedPad {
        try EmulatedSwitchPro()
    }

    public func describeOutput(_ report: [UInt8]) -> String {
        guard let output = SwitchProReports.output(report) else { return "not a rumble or subcommand report" }
        var parts: [String] = []
        if let frame = output.rumble, let levels = SwitchHDRumble.levels(frame) { parts.append("rumble \(levels)") }
        if let subcommand = output.subcommand {
            let name = SwitchProReports.Subcommand(rawValue: subcommand).map { "\($0)" } ?? String(format: "0x%02x", subcommand)
            parts.append("subcommand \(name)" + (output.arguments.isEmpty ? "" : " " + Hex.encode(Array(output.arguments.prefix(4)))))
        }
        return parts.joined(separator: ", ")
    }
}
