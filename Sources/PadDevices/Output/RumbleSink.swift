import CLinuxInput
import Feedback
import Foundation
import Glibc
import HIDCodecs
import PadSystem

/// Something that turns renderer actions into motor motion on one pad.
public protocol RumbleSink: AnyObject {
    /// Where the writes go, for error messages.
    var path: String { get }
    func perform(_ action: RumbleAction) throws
    /// Best effort, never throws: used on exit paths.
    func silence()
    /// After a write error: opens the output again and restores its state. False: this sink cannot
    /// (the caller makes a new one).
    func reopen() throws -> Bool
}

extension RumbleSink {
    public func reopen() throws -> Bool { false }
}

/// Rumble through the kernel's force-feedback API on an evdev node: one FF_RUMBLE effect, re-uploaded
/// with every change, always with a finite `replay.length` (the segment).
///
/// Why this is the default wherever the driver offers FF (hid-playstation, xpad, uinput pads): the
/// kernel ends the effect after `replay.length` by itself (ff-memless), and it erases every effect a
/// file uploaded when that file is closed — including when the process is killed. A crashed padgate
/// therefore cannot leave a motor running.
public final class EvdevRumbleSink: RumbleSink {
    public let path: String
    private let owned: OwnedDescriptor
    private var fd: Int32 { owned.rawValue }
    private var effectID: Int16 = -1

    public init(path: String) throws {
        self.path = path
        do {
            owned = try OwnedDescriptor("open (read/write, for force feedback)") { open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }
        } catch {
            throw DeviceError.from(error, path: path)
        }
    }

    deinit {
        silence()
        if effectID >= 0 { _ = padgate_ioctl_int(fd, padgate_EVIOCRMFF(), Int32(effectID)) }
    }

    public func perform(_ action: RumbleAction) throws {
        switch action {
        case .play(let levels, let segment):
            var effect = ff_effect()
            effect.type = UInt16(EvdevCode.FF_RUMBLE)
            effect.id = effectID   // -1 asks the kernel for a new slot; afterwards the same slot is updated
            effect.replay.length = UInt16(clamping: segment.milliseconds)
            effect.replay.delay = 0
            // 0-255 to 0-65535 so that hid-playstation's `magnitude / 256` gives the level back.
            effect.u.rumble.strong_magnitude = UInt16(levels.low) * 257
            effect.u.rumble.weak_magnitude = UInt16(levels.high) * 257
            if padgate_ioctl_ptr(fd, padgate_EVIOCSFF(), &effect) < 0 {
                let code = Errno.current
                throw code == .invalidArgument || code.rawValue == ENOSYS
                    ? DeviceError.unsupported("\(path) does not take FF_RUMBLE effects (no force feedback on this node)")
                    : DeviceError.from(errno: code, call: "EVIOCSFF", path: path)
            }
            effectID = effect.id
            try writePlay(count: 1)   // (re)starts the replay timer: this is what re-arms a segment
        case .stop:
            guard effectID >= 0 else { return }
            try writePlay(count: 0)
        }
    }

    public func silence() { if effectID >= 0 { try? writePlay(count: 0) } }

    private func writePlay(count: Int32) throws {
        var event = input_event()
        event.type = UInt16(EvdevCode.EV_FF)
        event.code = UInt16(bitPattern: effectID)
        event.value = count
        do {
            try withUnsafeBytes(of: &event) { (bytes) throws(SystemCallError) in try owned.descriptor.writeAll(bytes) }
        } catch {
            throw DeviceError.from(errno: error.errno, call: "write EV_FF", path: path)
        }
    }
}

/// Rumble as a family's own report through the pad's hidraw node, one report a level (`report`
/// makes it, report number first): a feature report (a Steam Deck's 0xEB command) or an output
/// report (the 2026 Steam Controller's 0x80). The pad holds a level until the next report, or
/// until its own hardware stops it (`PadDriver.rumbleHold` re-arms within that).
public final class HIDRawReportRumble: RumbleSink {
    public enum Channel: Sendable { case feature, output }
    public let path: String
    private let channel: Channel
    private let report: @Sendable (MotorLevels) -> [UInt8]
    private var device: HIDRawDevice
    private var last: MotorLevels?

    public init(hidraw: String, channel: Channel, report: @escaping @Sendable (MotorLevels) -> [UInt8]) throws {
        path = hidraw
        self.channel = channel
        self.report = report
        device = try HIDRawDevice(path: hidraw)
    }

    public func perform(_ action: RumbleAction) throws {
        let levels: MotorLevels
        switch action {
        case .play(let l, _): levels = l
        case .stop: levels = .silent
        }
        try send(levels)
        last = levels
    }

    private func send(_ levels: MotorLevels) throws {
        switch channel {
        case .feature: try device.sendFeatureReport(report(levels))
        case .output: try device.write(report(levels))
        }
    }

    public func silence() { try? perform(.stop) }

    public func reopen() throws -> Bool {
        device = try HIDRawDevice(path: path)
        if let last { try send(last) }
        return true
    }
}
