/// A HID usage: page in the high 16 bits, id in the low 16 bits (the "extended usage" form).
public struct Usage: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(page: UInt16, id: UInt16) { rawValue = UInt32(page) << 16 | UInt32(id) }
    public var page: UInt16 { UInt16(truncatingIfNeeded: rawValue >> 16) }
    public var id: UInt16 { UInt16(truncatingIfNeeded: rawValue) }
    public static func < (a: Usage, b: Usage) -> Bool { a.rawValue < b.rawValue }
    public var description: String { UsageNames.name(of: self) }
}

/// A report id byte. Unnumbered reports (descriptors without Report ID items) have none.
public struct ReportID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public static func < (a: ReportID, b: ReportID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { hexByte(rawValue) }
}

public enum ReportKind: String, Sendable, CaseIterable { case input, output, feature }

/// Input/Output/Feature item flags (HID 1.11 §6.2.2.5).
public struct MainItemFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let constant = MainItemFlags(rawValue: 1 << 0)
    public static let variable = MainItemFlags(rawValue: 1 << 1)
    public static let relative = MainItemFlags(rawValue: 1 << 2)
    public static let wrap = MainItemFlags(rawValue: 1 << 3)
    public static let nonLinear = MainItemFlags(rawValue: 1 << 4)
    public static let noPreferred = MainItemFlags(rawValue: 1 << 5)
    public static let nullState = MainItemFlags(rawValue: 1 << 6)
    public static let bufferedBytes = MainItemFlags(rawValue: 1 << 8)
}

/// One field of a report, in the shape hid-tools uses: a variable item with N usages becomes
/// N fields of count 1; an array item stays one field of count N with its usage list; padding
/// without usages becomes one field of `size * count` bits.
public struct ReportField: Hashable, Sendable {
    public var usagePage: UInt16
    public var usage: Usage
    /// Usages selectable by an array field's values (index = value - logicalMinimum); nil for variables.
    public var arrayUsages: [Usage]?
    public var startBit: Int
    public var sizeBits: Int
    public var count: Int
    public var logicalMinimum: Int64
    public var logicalMaximum: Int64
    public var physicalMinimum: Int64
    public var physicalMaximum: Int64
    public var unit: UInt32
    public var unitExponent: Int32
    public var flags: MainItemFlags
    /// Application collection usage in force when the field was declared.
    public var application: Usage?
    /// Logical collection usage in force when the field was declared (hid-tools names array fields after it).
    public var logicalCollection: Usage?
    /// Which collections the field sits in, as hid-tools counts them (see `CollectionCounts`).
    public var collections: CollectionCounts

    public var isArray: Bool { !flags.contains(.variable) }
    public var isConstant: Bool { flags.contains(.constant) }
    public var hasNullState: Bool { flags.contains(.nullState) }
    /// Values are read sign-extended when the logical range goes below zero (like hid-tools and the kernel).
    public var isSigned: Bool { logicalMinimum < 0 && sizeBits > 1 }
}

/// How many application, physical and logical collections the descriptor had opened when a field was declared
/// (never decremented, as hid-tools counts them): two fields with different counts are in different collections,
/// which is where hid-tools breaks a decoded report into lines.
public struct CollectionCounts: Hashable, Sendable {
    public var application = 0, physical = 0, logical = 0
    public init(application: Int = 0, physical: Int = 0, logical: Int = 0) {
        self.application = application; self.physical = physical; self.logical = logical
    }
}

public struct ReportLayout: Hashable, Sendable {
    public var kind: ReportKind
    public var id: ReportID?
    public var application: Usage?
    public var fields: [ReportField]
    /// Total length including the report id byte, in bits.
    public var sizeBits: Int
    /// Whole bytes (hid-tools truncates a trailing partial byte the same way).
    public var sizeBytes: Int { sizeBits >> 3 }
}

/// A parsed report descriptor: every input, output and feature report with its fields' bit positions.
public struct ReportDescriptor: Sendable {
    public var bytes: [UInt8]
    public var input: [ReportLayout]
    public var output: [ReportLayout]
    public var feature: [ReportLayout]

    public init(bytes: [UInt8]) throws(DescriptorError) {
        var parser = ReportDescriptorParser()
        try parser.parse(bytes)
        self.bytes = bytes
        input = parser.reports(.input)
        output = parser.reports(.output)
        feature = parser.reports(.feature)
    }

    public func reports(_ kind: ReportKind) -> [ReportLayout] {
        switch kind {
        case .input: return input
        case .output: return output
        case .feature: return feature
        }
    }


    /// The layout a received report of this kind should be decoded with, chosen by its first byte.
    public func layout(_ kind: ReportKind, for report: [UInt8]) -> ReportLayout? {
        let candidates = reports(kind)
        if let first = report.first, let numbered = candidates.first(where: { $0.id?.rawValue == first }) { return numbered }
        return candidates.first(where: { $0.id == nil })
    }
}
