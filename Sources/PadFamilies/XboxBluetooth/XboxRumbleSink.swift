import Feedback
import HIDCodecs
import PadDevices

/// Rumble on an Xbox One or Series pad over Bluetooth through its own report 0x03 on hidraw: all
/// four motors, the two behind the triggers included, which the kernel's force feedback (two
/// motors) cannot reach. Each segment is the report's duration, played once, so the pad falls
/// silent by itself when renewals stop (a killed padgate included).
public final class XboxRumbleSink: RumbleSink {
    public let path: String
    private let device: HIDRawDevice

    public init(path: String) throws {
        self.path = path
        device = try HIDRawDevice(path: path)
    }

    deinit { silence() }

    public func perform(_ action: RumbleAction) throws {
        switch action {
        case .play(let levels, let segment): try device.write(XboxRumbleReport(levels: levels, segment: segment).bytes)
        case .stop: try device.write(Self.stop)
        }
    }

    static let stop = XboxRumbleReport(enable: .all, leftTrigger: 0, rightTrigger: 0, strong: 0, weak: 0, duration10ms: 0).bytes

    public func silence() { try? device.write(Self.stop) }
}
