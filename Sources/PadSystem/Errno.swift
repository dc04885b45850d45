import Glibc

/// An errno value as a type (swift-system's `Errno`): errors carry it instead of a bare `Int32`,
/// callers match it by name, and only its description turns it into text.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The calling thread's errno, right after a call that failed.
    @inlinable public static var current: Errno { Errno(rawValue: errno) }

    public var description: String { String(cString: strerror(rawValue)) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let noSuchDeviceOrAddress = Errno(rawValue: ENXIO)
    public static let noDevice = Errno(rawValue: ENODEV)
    public static let busy = Errno(rawValue: EBUSY)
    public static let ioError = Errno(rawValue: EIO)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let transportShutDown = Errno(rawValue: ESHUTDOWN)
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    public static let protocolError = Errno(rawValue: EPROTO)
    public static let hostUnreachable = Errno(rawValue: EHOSTUNREACH)
    public static let networkUnreachable = Errno(rawValue: ENETUNREACH)
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    public static let noBufferSpace = Errno(rawValue: ENOBUFS)
    public static let noMemory = Errno(rawValue: ENOMEM)
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let addressFamilyNotSupported = Errno(rawValue: EAFNOSUPPORT)
    public static let addressNotAvailable = Errno(rawValue: EADDRNOTAVAIL)

    /// Out of descriptors or memory: worth pausing for, not worth reporting as a fault.
    public var isResourceShortage: Bool {
        self == .tooManyOpenFiles || self == .tooManyOpenFilesInSystem || self == .noBufferSpace || self == .noMemory
    }
}
