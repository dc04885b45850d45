import CHidapi
import Foundation
import Glibc
import PadSystem

/// A hidraw node opened through hidapi (hidraw backend): raw input reports in, output and
/// feature reports out. Reads take a timeout. Writes and feature requests cannot (hidapi's calls
/// block), but the kernel bounds each: usbhid's control and interrupt transfers and hidp's and
/// uhid's report requests give up after 5 s; a timed-out request is `DeviceError.timedOut`.
public final class HIDRawDevice {
    public let path: String
    let handle: OpaquePointer
    /// hidapi's descriptor once `pollDescriptor` has checked it.
    private var checkedDescriptor: FileDescriptor?
    private static let initialised: Bool = hid_init() == 0

    public init(path: String) throws {
        guard Self.initialised else { throw DeviceError.unsupported("hidapi could not initialise") }
        // hidapi reports failures as text; check access first so the error names the fix.
        if access(path, R_OK | W_OK) != 0 { throw DeviceError.from(errno: .current, call: "open", path: path) }
        guard let device = hid_open_path(path) else {
            let code = Errno.current
            throw DeviceError.from(errno: code.rawValue == 0 ? .ioError : code, call: "hid_open_path", path: path)
        }
        self.path = path
        handle = device
    }

    deinit { hid_close(handle) }

    /// The node's descriptor, for poll(2): hidapi has no call for it, but its hidraw backend keeps
    /// the fd as the first field of its handle. That is checked, not trusted: the fd must be open
    /// on this very device node, else this throws and the caller reads the pad another way.
    public func pollDescriptor() throws -> FileDescriptor {
        if let checkedDescriptor { return checkedDescriptor }
        let candidate = FileDescriptor(rawValue: UnsafeRawPointer(handle).load(as: Int32.self))
        var node = stat()
        guard candidate.rawValue >= 0, let opened = candidate.characterDevice(), stat(path, &node) == 0,
              opened == UInt(node.st_rdev) else {
            throw DeviceError.unsupported("this hidapi keeps its hidraw descriptor elsewhere; cannot wait on \(path)")
        }
        checkedDescriptor = candidate
        return candidate
    }

    /// Reads return at once with 0 when no report is queued (for a poll loop).
    /// The node's descriptor is made non-blocking too, for `readQueued`: hidapi's own reads
    /// poll before they read, and hidraw's writes and feature requests do not look at the flag.
    public func setNonBlocking() throws {
        guard hid_set_nonblocking(handle, 1) == 0 else { throw failure("set non-blocking") }
        if let descriptor = try? pollDescriptor() {
            do { try descriptor.setNonBlocking() } catch { throw DeviceError.from(error, path: path) }
        }
    }

    /// Reads the next queued input report straight from the hidraw node (one read(2), where
    /// `read(into:timeout:)` polls first); 0 when none is queued. For a caller that polls
    /// `pollDescriptor()` itself and made the device non-blocking with `setNonBlocking()`. A
    /// removed pad is an error (hidraw answers EIO).
    public func readQueued(into buffer: UnsafeMutableBufferPointer<UInt8>) throws -> Int {
        let descriptor = try pollDescriptor()
        do {
            return try descriptor.read(into: UnsafeMutableRawBufferPointer(buffer))
        } catch where error.errno == .wouldBlock {
            return 0
        } catch {
            if error.errno == .noDevice || access(path, F_OK) != 0 { throw DeviceError.removed(path: path) }
            throw DeviceError.from(error, path: path)
        }
    }

    /// Reads one input report into `buffer`; returns its length, or 0 if `timeout` passed first.
    public func read(into buffer: UnsafeMutableBufferPointer<UInt8>, timeout: Duration) throws -> Int {
        let ms = Int32(clamping: timeout.milliseconds)
        let n = hid_read_timeout(handle, buffer.baseAddress, buffer.count, ms)
        if n < 0 { throw failure("read") }
        return Int(n)
    }

    public func read(timeout: Duration, maxLength: Int = 128) throws -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: maxLength)
        let n = try bytes.withUnsafeMutableBufferPointer { try read(into: $0, timeout: timeout) }
        return n == 0 ? nil : Array(bytes[0..<n])
    }

    /// Sends an output report; the first byte is the report id.
    public func write(_ report: [UInt8]) throws {
        let n = report.withUnsafeBufferPointer { hid_write(handle, $0.baseAddress, $0.count) }
        if n < 0 { throw failure("write") }
    }

    /// SET_REPORT for a feature report; the first byte is the report id (0 for a device without ids).
    public func sendFeatureReport(_ report: [UInt8]) throws {
        let n = report.withUnsafeBufferPointer { hid_send_feature_report(handle, $0.baseAddress, $0.count) }
        if n < 0 { throw failure("send feature report 0x\(String(report.first ?? 0, radix: 16))") }
    }

    /// GET_REPORT for a feature report; the reply starts with the report id.
    public func featureReport(_ id: UInt8, length: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(length, 1))
        bytes[0] = id
        let n = bytes.withUnsafeMutableBufferPointer { hid_get_feature_report(handle, $0.baseAddress, $0.count) }
        if n < 0 { throw failure("get feature report 0x\(String(id, radix: 16))") }
        return Array(bytes[0..<Int(n)])
    }

    private func failure(_ what: String) -> DeviceError {
        let code = Errno.current
        if code == .noDevice || code == .brokenPipe || code == .transportShutDown { return .removed(path: path) }
        if code == .timedOut { return .timedOut(what, path: path) }
        if access(path, F_OK) != 0 { return .removed(path: path) }
        let message = hid_error(handle).map { wcharString($0) } ?? "unknown error"
        return .systemCall("\(what) (\(message))", path: path, errno: code.rawValue == 0 ? .ioError : code)
    }

    /// The device's report descriptor, from sysfs (hidapi 0.13 has no call for it).
    public static func reportDescriptor(hidrawPath: String) throws -> [UInt8] {
        let name = (hidrawPath as NSString).lastPathComponent
        let sysfs = "/sys/class/hidraw/\(name)/device/report_descriptor"
        guard let data = FileManager.default.contents(atPath: sysfs) else { throw DeviceError.notFound(path: sysfs) }
        return [UInt8](data)
    }
}

private func wcharString(_ pointer: UnsafePointer<wchar_t>) -> String {
    var scalars = String.UnicodeScalarView()
    var p = pointer
    while p.pointee != 0 {
        if let scalar = Unicode.Scalar(UInt32(bitPattern: p.pointee)) { scalars.append(scalar) }
        p += 1
    }
    return String(scalars)
}
