/// What padgate needs to know about one udev device, captured as plain data so that the grouping
/// logic can be tested with records taken from a real kernel (see Tests/PadDevicesTests/Fixtures).
public struct UdevRecord: Codable, Sendable, Equatable {
    public struct Ancestor: Codable, Sendable, Equatable {
        public var syspath: String
        public var subsystem: String
        public var properties: [String: String]
        /// Only the attributes padgate reads (`capabilities/ff` of input devices).
        public var attributes: [String: String]
        public init(syspath: String, subsystem: String, properties: [String: String], attributes: [String: String] = [:]) {
            self.syspath = syspath; self.subsystem = subsystem; self.properties = properties; self.attributes = attributes
        }
    }

    public var syspath: String
    public var subsystem: String
    public var sysname: String
    public var devnode: String?
    public var properties: [String: String]
    /// Nearest first: the `input` and `hid` ancestors, the ones grouping needs.
    public var ancestors: [Ancestor]

    public init(syspath: String, subsystem: String, sysname: String, devnode: String?,
                properties: [String: String], ancestors: [Ancestor]) {
        self.syspath = syspath; self.subsystem = subsystem; self.sysname = sysname
        self.devnode = devnode; self.properties = properties; self.ancestors = ancestors
    }

    public func nearest(_ subsystem: String) -> Ancestor? { ancestors.first { $0.subsystem == subsystem } }
}
