import Feedback
import HIDCodecs
import PadDevices
import WireProtocol

/// The Deck's motors through its controller's hidraw node: the rumble command (0xEB) as a feature
/// report, as hid-steam sends it. The Deck holds a level until told otherwise, so the renderer's
/// segments are re-sent while a lease lasts and `silence()` runs on every exit path, as for a
/// DualSense's reports.
public final class SteamDeckRumble: RumbleSink {
    public let path: String
    private var device: HIDRawDevice
    private var last: MotorLevels?

    public init(hidraw: String) throws {
        path = hidraw
        device = try HIDRawDevice(path: hidraw)
    }

    public func perform(_ action: RumbleAction) throws {
        let levels: MotorLevels
        switch action {
        case .play(let l, _): levels = l
        case .stop: levels = .silent
        }
        try device.sendFeatureReport(SteamDeckCommands.rumble(levels))
        last = levels
    }

    public func silence() { try? perform(.stop) }

    public func reopen() throws -> Bool {
        device = try HIDRawDevice(path: path)
        if let last { try device.sendFeatureReport(SteamDeckCommands.rumble(last)) }
        return true
    }
}

/// The Deck's trackpads through its controller's hidraw node: each pulse train as the Deck's own
/// command (0x8F), a feature report as hid-steam sends it.
public final class SteamDeckPulses: TrackpadPulseOutput {
    private let device: HIDRawDevice

    public init(hidraw: String) throws { device = try HIDRawDevice(path: hidraw) }

    public func play(_ pulse: TrackpadPulse) throws {
        let pad: SteamDeckCommands.Pulse.Pad = switch pulse.side { case .left: .left; case .right: .right; case .both: .both }
        try device.sendFeatureReport(SteamDeckCommands.pulse(.init(pad: pad, onMicros: pulse.onMicros, offMicros: pulse.offMicros,
                                                                    count: pulse.count, gain: pulse.gain)))
    }
}
