import CEvdev
import Glibc
import PadSystem

/// One evdev node read through libevdev, which also keeps the node's current state
/// (key, axis and multitouch slot values) and resynchronises it after `SYN_DROPPED`.
public final class EvdevDevice {
    public let path: String
    private let owned: OwnedDescriptor
    let handle: OpaquePointer
    /// Events the kernel dropped because we read too slowly (each followed by a resync).
    public private(set) var droppedSyncs = 0

    public init(path: String, writable: Bool = false) throws {
        do {
            owned = try OwnedDescriptor("open") { open(path, (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC) }
        } catch {
            throw DeviceError.from(error, path: path)
        }
        var device: OpaquePointer?
        let rc = libevdev_new_from_fd(owned.rawValue, &device)
        guard rc == 0, let device else {
            throw DeviceError.from(errno: Errno(rawValue: -rc), call: "libevdev_new_from_fd", path: path)
        }
        self.path = path
        handle = device
    }

    deinit {
        libevdev_free(handle)  // before the descriptor it reads closes with `owned`
    }

    /// What to poll for events.
    public var descriptor: FileDescriptor { owned.descriptor }

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
            let rc: Int32
            do {
                rc = try SystemCall.retrying("read", .negatedErrno) { libevdev_next_event(handle, flags, &event) }
            } catch where error.errno == .wouldBlock {
                if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue { flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue; continue }
                return count
            } catch {
                throw error.errno == .noDevice ? DeviceError.removed(path: path) : DeviceError.from(error, path: path)
            }
            if rc == Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue) {
                if flags == LIBEVDEV_READ_FLAG_NORMAL.rawValue { droppedSyncs += 1 }
                flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
            }
            body(event); count += 1
        }
    }
}
