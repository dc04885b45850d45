import Feedback
import HIDCodecs
import PadDevices
import WireProtocol

/// The Deck's trackpads through its controller's hidraw node: each pulse train as the Deck's own
/// command (0x8F), a feature report as hid-steam sends it.
public final class SteamDeckPulses: TrackpadPulseOutput {
    private let device: HIDRawDevice

    public init(hidraw: String) throws { device = try HIDRawDevice(path: hidraw) }

    public func play(_ pulse: TrackpadPulse) throws {
        try device.sendFeatureReport(SteamDeckCommands.pulse(.init(pad: pulse.side, onMicros: pulse.onMicros, offMicros: pulse.offMicros,
                                                                    count: pulse.count, gain: pulse.gain)))
    }
}
