import Feedback
import HIDCodecs
import PadDevices

/// The Steam Controller's (2026) motors through its hidraw node: output report 0x80 (type,
/// intensity, the low-frequency motor's speed and gain, the high-frequency one's), as the 2026
/// hid-steam sends it (intensity 0, gains 2 and 0). Its hardware stops a level within about 50 ms
/// unless it is sent again (`SteamControllerDriver.rumbleHold`: the renderer re-arms within it).
public final class SteamControllerRumble: RumbleSink {
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
        try device.write(SteamControllerCommands.rumble(levels))
        last = levels
    }

    public func silence() { try? perform(.stop) }

    public func reopen() throws -> Bool {
        device = try HIDRawDevice(path: path)
        if let last { try device.write(SteamControllerCommands.rumble(last)) }
        return true
    }
}
