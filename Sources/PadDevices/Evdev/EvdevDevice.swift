import CEvdev
import Glibc

/// One evdev node read through libevdev, which also keeps the node's current state
/// (key, axis and multitouch slot values) and resynchronises it after `SYN_DROPPED`.
public final class EvdevDevice {
    public let path: String
    public let fileDescriptor: Int32
    let handle: OpaquePointer
    /// Events the kernel dropped because we read too slowly (each followed by a resync).
    public private(set) var droppedSyncs = 0

    public init(path: String, writable: Bool = false) throws {
        let fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw DeviceError.from(errno: errno, call: "open", path: path) }
        var device: OpaquePointer?
        let rc = libevdev_new_from_fd(fd, &device)
        guard rc == 0, let device else {
            close(fd)
            throw DeviceError.from(errno: -rc, call: "libevdev_new_from_fd", path: path)
        }
        self.path = path
        fileDescriptor = fd
        handle = device
    }

    deinit {
        libevdev_free(handle)
        close(fileDescriptor)
    }

    public var name: String { String(cString: libevdev_get_name(handle)) }
    public var uniq: String { libevdev_get_uniq(handle).map { String(cString: $0) } ?? "" }
    public var vendorID: UInt16 { UInt16(truncatingIfNeeded: libevdev_get_id_vendor(handle)) }
    public var productID: UInt16 { UInt16(truncatingIfNeeded: libevdev_get_id_product(handle)) }
    public var busType: UInt16 { UInt16(truncatingIfNeeded: libevdev_get_id_bustype(handle)) }

    public func has(type: UInt32, code: UInt32) -> Bool { libevdev_has_event_code(handle, type, code) != 0 }
    public func has(property: UInt32) -> Bool { libevdev_has_property(handle, property) != 0 }
    public func value(type: UInt32, code: UInt32) -> Int32 { libevdev_get_event_value(handle, type, code) }

    public struct AxisInfo: Equatable, Sendable { public var minimum, maximum, fuzz, flat, resolution: Int32 }
    public func axisInfo(_ code: UInt32) -> AxisInfo? {
        guard let info = libevdev_get_abs_info(handle, code) else { return nil }
        return AxisInfo(minimum: info.pointee.minimum, maximum: info.pointee.maximum, fuzz: info.pointee.fuzz,
                        flat: info.pointee.flat, resolution: info.pointee.resolution)
    }

    public var slotCount: Int { Int(libevdev_get_num_slots(handle)) }
    public func slotValue(_ slot: Int, code: UInt32) -> Int32 { libevdev_get_slot_value(handle, UInt32(slot), code) }

    /// Reads every event queued on the node, handing each to `body`; returns when none is left.
    /// After `SYN_DROPPED`, libevdev replays the difference to the real state as synthetic events,
    /// so `body` still sees a consistent sequence. Throws `.removed` once the device is gone.
    @discardableResult
    public func readAvailable(_ body: (input_event) -> Void) throws -> Int {
        var event = input_event()
        var count = 0
        var flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
        while true {
            let rc = libevdev_next_event(handle, flags, &event)
            switch rc {
            case Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue):
                body(event); count += 1
            case Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue):
                if flags == LIBEVDEV_READ_FLAG_NORMAL.rawValue { droppedSyncs += 1 }
                flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
                body(event); count += 1
            case -EAGAIN:
                if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue { flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue; continue }
                return count
            case -EINTR:
                continue
            default:
                throw rc == -ENODEV ? DeviceError.removed(path: path) : DeviceError.from(errno: -rc, call: "read", path: path)
            }
        }
    }

    /// Takes the node for this process alone (EVIOCGRAB), e.g. while forwarding it elsewhere.
    public func grab(_ on: Bool) throws {
        let rc = libevdev_grab(handle, on ? LIBEVDEV_GRAB : LIBEVDEV_UNGRAB)
        if rc < 0 { throw DeviceError.from(errno: -rc, call: "EVIOCGRAB", path: path) }
    }
}
