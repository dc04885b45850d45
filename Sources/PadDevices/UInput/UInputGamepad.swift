import CEvdev
import CLinuxInput
import Glibc
import HIDCodecs
import PadSystem

/// A virtual evdev gamepad made through /dev/uinput with libevdev's uinput API, laid out like an
/// Xbox 360 pad under xpad (the layout games and SDL expect from a generic pad).
public final class UInputGamepad {
    public static let path = "/dev/uinput"
    let template: OpaquePointer
    let device: OpaquePointer
    public let name: String

    public struct Axis: Sendable {
        public var code: UInt32
        public var range: ClosedRange<Int32>
        /// Noise the kernel filters out, and the dead zone around the centre (struct input_absinfo).
        public var fuzz: Int32 = 0, flat: Int32 = 0
    }

    public struct Layout: Sendable {
        public var keys: [UInt32]
        public var axes: [Axis]
        public var rumble: Bool

        /// What xpad gives an Xbox 360 pad; SDL and games expect this of a generic pad too.
        public static let xbox360 = Layout(
            keys: GamepadButtons.table.compactMap { $0.xpadKey.map(UInt32.init) },
            axes: [Axis(code: EvdevCode.ABS_X, range: -32768...32767, fuzz: 16, flat: 128),
                   Axis(code: EvdevCode.ABS_Y, range: -32768...32767, fuzz: 16, flat: 128),
                   Axis(code: EvdevCode.ABS_RX, range: -32768...32767, fuzz: 16, flat: 128),
                   Axis(code: EvdevCode.ABS_RY, range: -32768...32767, fuzz: 16, flat: 128),
                   Axis(code: EvdevCode.ABS_Z, range: 0...255), Axis(code: EvdevCode.ABS_RZ, range: 0...255),
                   Axis(code: EvdevCode.ABS_HAT0X, range: -1...1), Axis(code: EvdevCode.ABS_HAT0Y, range: -1...1)],
            rumble: true)
    }

    /// USB ids the pad presents. Xbox 360's make it an "xbox" pad to padgate and to SDL; pid.codes'
    /// test id (1209:0001) belongs to no vendor, so the pad is a generic evdev gamepad.
    public struct Identity: Sendable {
        public var name: String
        public var vendorID: UInt16
        public var productID: UInt16
        public var version: UInt16 = 0x0110
        /// What xpad names a wired Xbox 360 pad, with the version a real one reports (SDL's
        /// test/testevdev.c records 0x0114): nothing a game reads tells it from the real pad.
        /// padgate's own pads are told apart by their phys (`PadPhys`).
        public static let xbox360 = Identity(name: "Microsoft X-Box 360 pad", vendorID: 0x045e, productID: 0x028e, version: 0x0114)
        public static let generic = Identity(name: "padgate virtual gamepad", vendorID: 0x1209, productID: 0x0001)
    }

    public convenience init(name: String, layout: Layout = .xbox360, phys: String = PadPhys.uinput) throws {
        try self.init(identity: Identity(name: name, vendorID: Identity.xbox360.vendorID, productID: Identity.xbox360.productID),
                         layout: layout, phys: phys)
    }

    public init(identity: Identity = .xbox360, layout: Layout = .xbox360, phys: String = PadPhys.uinput) throws {
        // uinput keeps UINPUT_MAX_NAME_SIZE (80) bytes with the NUL: cut at a character, not mid-UTF-8.
        let name = Self.fittingName(identity.name)
        guard let template = libevdev_new() else { throw DeviceError.unsupported("libevdev_new failed") }
        self.template = template
        self.name = name
        libevdev_set_name(template, name)
        libevdev_set_phys(template, phys)
        libevdev_set_id_bustype(template, Int32(PadBus.usb.kernelBus))
        libevdev_set_id_vendor(template, Int32(identity.vendorID))
        libevdev_set_id_product(template, Int32(identity.productID))
        libevdev_set_id_version(template, Int32(identity.version))
        libevdev_enable_event_type(template, EvdevCode.EV_KEY)
        for key in layout.keys { libevdev_enable_event_code(template, EvdevCode.EV_KEY, key, nil) }
        libevdev_enable_event_type(template, EvdevCode.EV_ABS)
        for axis in layout.axes {
            var info = input_absinfo(value: 0, minimum: axis.range.lowerBound, maximum: axis.range.upperBound,
                                     fuzz: axis.fuzz, flat: axis.flat, resolution: 0)
            libevdev_enable_event_code(template, EvdevCode.EV_ABS, axis.code, &info)
        }
        if layout.rumble {
            libevdev_enable_event_type(template, EvdevCode.EV_FF)
            libevdev_enable_event_code(template, EvdevCode.EV_FF, EvdevCode.FF_RUMBLE, nil)
        }
        let fd = open(Self.path, O_RDWR | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = Errno.current
            libevdev_free(template)
            throw DeviceError.from(errno: code, call: "open", path: Self.path)
        }
        // padgate's mark on the pads it makes: set here too, as the input device's phys is what
        // udev shows and what `forward` checks before it forwards a pad.
        _ = phys.withCString { padgate_ioctl_ptr(fd, padgate_UI_SET_PHYS(), UnsafeMutableRawPointer(mutating: $0)) }
        var created: OpaquePointer?
        let rc = libevdev_uinput_create_from_device(template, fd, &created)
        guard rc == 0, let created else {
            close(fd)
            libevdev_free(template)
            throw DeviceError.from(errno: Errno(rawValue: -rc), call: "UI_DEV_CREATE", path: Self.path)
        }
        device = created
    }

    static let maxNameBytes = 79

    static func fittingName(_ name: String) -> String {
        var fitted = ""
        for character in name {
            guard fitted.utf8.count + String(character).utf8.count <= maxNameBytes else { break }
            fitted.append(character)
        }
        return fitted
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
    public var descriptor: FileDescriptor { FileDescriptor(rawValue: libevdev_uinput_get_fd(device)) }

    public func emit(type: UInt32, code: UInt32, value: Int32) throws {
        let rc = libevdev_uinput_write_event(device, type, code, value)
        if rc < 0 { throw DeviceError.from(errno: Errno(rawValue: -rc), call: "write", path: Self.path) }
    }

    /// Ends a frame: readers see everything since the last one at once.
    public func sync() throws { try emit(type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0) }
}
