import CEvdev
import Glibc

/// A virtual evdev gamepad made through /dev/uinput with libevdev's uinput API, laid out like an
/// Xbox 360 pad under xpad (the layout games and SDL expect from a generic pad).
public final class UInputGamepad {
    public static let path = "/dev/uinput"
    let template: OpaquePointer
    let device: OpaquePointer
    public let name: String

    public struct Layout: Sendable {
        public var keys: [UInt32]
        /// (code, minimum, maximum, fuzz, flat)
        public var axes: [(UInt32, Int32, Int32, Int32, Int32)]
        public var rumble: Bool

        public static let xbox360 = Layout(
            keys: [EvdevCode.BTN_SOUTH, EvdevCode.BTN_EAST, EvdevCode.BTN_NORTH, EvdevCode.BTN_WEST,
                   EvdevCode.BTN_TL, EvdevCode.BTN_TR, EvdevCode.BTN_SELECT, EvdevCode.BTN_START,
                   EvdevCode.BTN_MODE, EvdevCode.BTN_THUMBL, EvdevCode.BTN_THUMBR],
            axes: [(EvdevCode.ABS_X, -32768, 32767, 16, 128), (EvdevCode.ABS_Y, -32768, 32767, 16, 128),
                   (EvdevCode.ABS_RX, -32768, 32767, 16, 128), (EvdevCode.ABS_RY, -32768, 32767, 16, 128),
                   (EvdevCode.ABS_Z, 0, 255, 0, 0), (EvdevCode.ABS_RZ, 0, 255, 0, 0),
                   (EvdevCode.ABS_HAT0X, -1, 1, 0, 0), (EvdevCode.ABS_HAT0Y, -1, 1, 0, 0)],
            rumble: true)
    }

    public init(name: String = "padgate virtual Xbox 360 pad", vendorID: Int32 = 0x045e, productID: Int32 = 0x028e,
                layout: Layout = .xbox360, phys: String = "padgate/uinput") throws {
        guard let template = libevdev_new() else { throw DeviceError.unsupported("libevdev_new failed") }
        self.template = template
        self.name = name
        libevdev_set_name(template, name)
        libevdev_set_phys(template, phys)
        libevdev_set_id_bustype(template, 0x03)
        libevdev_set_id_vendor(template, vendorID)
        libevdev_set_id_product(template, productID)
        libevdev_set_id_version(template, 0x0110)
        libevdev_enable_event_type(template, EvdevCode.EV_KEY)
        for key in layout.keys { libevdev_enable_event_code(template, EvdevCode.EV_KEY, key, nil) }
        libevdev_enable_event_type(template, EvdevCode.EV_ABS)
        for (code, minimum, maximum, fuzz, flat) in layout.axes {
            var info = input_absinfo(value: 0, minimum: minimum, maximum: maximum, fuzz: fuzz, flat: flat, resolution: 0)
            libevdev_enable_event_code(template, EvdevCode.EV_ABS, code, &info)
        }
        if layout.rumble {
            libevdev_enable_event_type(template, EvdevCode.EV_FF)
            libevdev_enable_event_code(template, EvdevCode.EV_FF, EvdevCode.FF_RUMBLE, nil)
        }
        let fd = open(Self.path, O_RDWR | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            libevdev_free(template)
            throw DeviceError.from(errno: code, call: "open", path: Self.path)
        }
        var created: OpaquePointer?
        let rc = libevdev_uinput_create_from_device(template, fd, &created)
        guard rc == 0, let created else {
            close(fd)
            libevdev_free(template)
            throw DeviceError.from(errno: -rc, call: "UI_DEV_CREATE", path: Self.path)
        }
        device = created
    }

    deinit {
        let fd = libevdev_uinput_get_fd(device)
        libevdev_uinput_destroy(device)
        close(fd)
        libevdev_free(template)
    }

    /// The event node the kernel made, e.g. /dev/input/event7 (nil until udev has named it).
    public var devnode: String? { libevdev_uinput_get_devnode(device).map { String(cString: $0) } }
    public var syspath: String? { libevdev_uinput_get_syspath(device).map { String(cString: $0) } }
    public var fileDescriptor: Int32 { libevdev_uinput_get_fd(device) }

    public func emit(type: UInt32, code: UInt32, value: Int32) throws {
        let rc = libevdev_uinput_write_event(device, type, code, value)
        if rc < 0 { throw DeviceError.from(errno: -rc, call: "write", path: Self.path) }
    }

    /// Ends a frame: readers see everything since the last one at once.
    public func sync() throws { try emit(type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0) }
}
