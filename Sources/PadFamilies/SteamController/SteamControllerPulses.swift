import HIDCodecs
import PadDevices
import WireProtocol

/// The Steam Controller's trackpads through its hidraw node: each pulse train as its own output
/// report 0x81. It has no gain: the train's gain stays on the wire.
public final class SteamControllerPulses: TrackpadPulseOutput {
    private let device: HIDRawDevice

    public init(hidraw: String) throws { device = try HIDRawDevice(path: hidraw) }

    public func play(_ pulse: TrackpadPulse) throws {
        try device.write(SteamControllerCommands.pulse(pad: pulse.side, onMicros: pulse.onMicros, offMicros: pulse.offMicros, count: pulse.count))
    }
}
