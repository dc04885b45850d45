import CLinuxInput
import Feedback
import Glibc
import HIDCodecs
import PadSystem

/// The uinput end of force feedback: a program's EVIOCSFF on a uinput pad's evdev node arrives here
/// as an upload request that must be answered (UI_BEGIN/END_FF_UPLOAD), or the program blocks for
/// the kernel's 30 s request timeout. Plays and stops arrive as EV_FF events. An emulated pad uses
/// this to pass a game's rumble on; the device tests use it to see what padgate uploads.
public final class UInputRumbleReceiver {
    public struct UploadedEffect: Equatable, Sendable {
        public var id: Int16
        public var type: UInt16
        public var levels: MotorLevels
        /// `replay.length`; 0 means "until stopped".
        public var length: Duration
        /// `replay.delay`: how long after each play the effect starts.
        public var delay: Duration = .zero
    }

    public enum Event: Equatable, Sendable {
        case uploaded(UploadedEffect)
        case erased(id: Int32)
        case played(id: UInt16, count: Int32)
    }

    private let descriptor: FileDescriptor
    private var fd: Int32 { descriptor.rawValue }
    /// Reads and answers on the descriptor of a uinput device its owner keeps open.
    public init(uinput descriptor: FileDescriptor) { self.descriptor = descriptor }

    // _IOWR/_IOW('U', nr, struct): uinput's request numbers, built here because Swift cannot expand the macros.
    private static func request(_ direction: UInt, _ number: UInt, size: Int) -> UInt {
        direction << 30 | UInt(size) << 16 | UInt(UInt8(ascii: "U")) << 8 | number
    }
    private static let beginUpload = request(3, 200, size: MemoryLayout<uinput_ff_upload>.size)
    private static let endUpload = request(1, 201, size: MemoryLayout<uinput_ff_upload>.size)
    private static let beginErase = request(3, 202, size: MemoryLayout<uinput_ff_erase>.size)
    private static let endErase = request(1, 203, size: MemoryLayout<uinput_ff_erase>.size)
    private static let evUInput: UInt16 = 0x0101, uiFFUpload: UInt16 = 1, uiFFErase: UInt16 = 2

    /// Reads every queued event on the uinput descriptor, answering requests; returns what happened.
    public func service() throws -> [Event] {
        var events: [Event] = []
        var event = input_event()
        while true {
            let n: Int
            do {
                n = try withUnsafeMutableBytes(of: &event) { (bytes) throws(SystemCallError) in try descriptor.read(into: bytes) }
            } catch where error.errno == .wouldBlock {
                return events
            } catch {
                throw DeviceError.from(error, path: UInputGamepad.path)
            }
            guard n == MemoryLayout<input_event>.size else { return events }
            if event.type == Self.evUInput && event.code == Self.uiFFUpload {
                var upload = uinput_ff_upload()
                upload.request_id = UInt32(bitPattern: event.value)
                guard padgate_ioctl_ptr(fd, Self.beginUpload, &upload) >= 0 else {
                    throw DeviceError.from(errno: .current, call: "UI_BEGIN_FF_UPLOAD", path: UInputGamepad.path)
                }
                let e = upload.effect
                let accepted = e.type == UInt16(EvdevCode.FF_RUMBLE)
                upload.retval = accepted ? 0 : -EINVAL
                _ = padgate_ioctl_ptr(fd, Self.endUpload, &upload)
                if accepted {
                    events.append(.uploaded(UploadedEffect(
                        id: e.id, type: e.type,
                        levels: MotorLevels(low: UInt8(e.u.rumble.strong_magnitude >> 8), high: UInt8(e.u.rumble.weak_magnitude >> 8)),
                        length: .milliseconds(Int(e.replay.length)), delay: .milliseconds(Int(e.replay.delay)))))
                }
            } else if event.type == Self.evUInput && event.code == Self.uiFFErase {
                var erase = uinput_ff_erase()
                erase.request_id = UInt32(bitPattern: event.value)
                guard padgate_ioctl_ptr(fd, Self.beginErase, &erase) >= 0 else {
                    throw DeviceError.from(errno: .current, call: "UI_BEGIN_FF_ERASE", path: UInputGamepad.path)
                }
                erase.retval = 0
                _ = padgate_ioctl_ptr(fd, Self.endErase, &erase)
                events.append(.erased(id: Int32(erase.effect_id)))
            } else if event.type == UInt16(EvdevCode.EV_FF) {
                events.append(.played(id: event.code, count: event.value))
            }
        }
    }
}
