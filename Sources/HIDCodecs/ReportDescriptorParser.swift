/// Walks descriptor items and builds report layouts with the same field semantics as hid-tools
/// (`hidtools.hid.ReportDescriptor`), so our layouts can be checked against it field by field.
/// Everything is bounded: descriptor size, Push depth, Report Size, report length, usages and fields.
struct ReportDescriptorParser {
    static let maximumPushDepth = 16
    static let maximumFieldBits = 256          // the kernel refuses larger Report Size values
    static let maximumReportBits = 16384 * 8   // HID_MAX_BUFFER_SIZE
    static let maximumUsagesPerItem = 65536
    static let maximumFields = 65536

    /// Global state (HID 1.11 §6.2.2.7). Like hid-tools, the enclosing collections' usages live here too,
    /// so Push/Pop save and restore them.
    struct Globals {
        var usagePage: UInt32 = 0          // already shifted into the high 16 bits
        var logicalMinimum: Int64 = 0
        var logicalMaximumItem: DescriptorItem? = nil
        var physicalMinimum: Int64 = 0
        var physicalMaximumItem: DescriptorItem? = nil
        var unit: UInt32 = 0
        var unitExponent: Int32 = 0
        var reportSize: Int = 0
        var reportCount: Int = 0
        var application: UInt32? = nil
        var logical: UInt32? = nil
        var physical: UInt32? = nil
    }

    /// Local state, reset after every main item.
    struct Locals {
        var usages: [(value: UInt32, dataSize: Int)] = []
        var usageMinimum: UInt32 = 0
        var usageMaximum: UInt32 = 0
        var usageMaximumDataSize: Int = 0
        mutating func reset() { usages.removeAll(keepingCapacity: true); usageMinimum = 0; usageMaximum = 0; usageMaximumDataSize = 0 }
    }

    struct ReportKey: Hashable { var kind: ReportKind; var id: Int }

    var globals = Globals()
    var globalStack: [Globals] = []
    var locals = Locals()
    /// Report ID persists across main items until the next Report ID item (it is not reset with locals).
    var reportID: Int = -1
    var layouts: [ReportLayout] = []
    var layoutIndex: [ReportKey: Int] = [:]
    var fieldTotal = 0
    /// Not a global: Push/Pop leave it alone (as in hid-tools).
    var collections = CollectionCounts()

    /// Reports of one kind ordered by id (unnumbered first), the order hid-tools lists them in.
    func reports(_ kind: ReportKind) -> [ReportLayout] {
        layouts.filter { $0.kind == kind }.sorted { ($0.id.map { Int($0.rawValue) } ?? -1) < ($1.id.map { Int($0.rawValue) } ?? -1) }
    }

    mutating func parse(_ bytes: [UInt8]) throws(DescriptorError) {
        for item in try DescriptorTokenizer.items(bytes) {
            try apply(item)
        }
    }

    private static func resolved(_ maximum: DescriptorItem?, minimum: Int64) -> Int64 {
        guard let maximum else { return 0 }
        // A negative minimum makes the range signed, so the maximum is read signed too (as the kernel does).
        return minimum < 0 ? Int64(maximum.signedValue) : Int64(maximum.unsignedValue)
    }

    mutating func apply(_ item: DescriptorItem) throws(DescriptorError) {
        let value = item.unsignedValue
        switch item.tag {
        // Main items
        case 0x80: try addFields(.input, item)
        case 0x90: try addFields(.output, item)
        case 0xB0: try addFields(.feature, item)
        case 0xA0:
            concatenateUsages()
            switch value {
            case 0x00: collections.physical += 1
            case 0x01: collections.application += 1
            case 0x02: collections.logical += 1
            default: break
            }
            if let last = locals.usages.last?.value {
                switch value {
                case 0x00: globals.physical = last
                case 0x01: globals.application = last
                case 0x02: globals.logical = last
                default: break
                }
            }
            locals.reset()
        case 0xC0: break // End Collection: nothing to undo, collection usages stay as hid-tools keeps them
        // Global items
        case 0x04: globals.usagePage = value << 16
        case 0x14: globals.logicalMinimum = Int64(item.signedValue)
        case 0x24: globals.logicalMaximumItem = item
        case 0x34: globals.physicalMinimum = Int64(item.signedValue)
        case 0x44: globals.physicalMaximumItem = item
        case 0x54:
            let nibble = Int32(value & 0x0F)
            globals.unitExponent = nibble > 7 ? nibble - 16 : nibble
        case 0x64: globals.unit = value
        case 0x74:
            guard value <= UInt32(Self.maximumFieldBits) else {
                throw .reportSizeTooLarge(bits: Int(value), offset: item.offset, limit: Self.maximumFieldBits)
            }
            globals.reportSize = Int(value)
        case 0x84: reportID = Int(value & 0xFF)
        case 0x94: globals.reportCount = Int(min(value, UInt32(Self.maximumReportBits + 1)))
        case 0xA4:
            guard globalStack.count < Self.maximumPushDepth else { throw .globalStackOverflow(offset: item.offset, limit: Self.maximumPushDepth) }
            globalStack.append(globals)
        case 0xB4:
            guard let saved = globalStack.popLast() else { throw .popWithoutPush(offset: item.offset) }
            globals = saved
        // Local items
        case 0x08:
            guard locals.usages.count < Self.maximumUsagesPerItem else {
                throw .tooManyUsages(count: locals.usages.count + 1, offset: item.offset, limit: Self.maximumUsagesPerItem)
            }
            locals.usages.append((item.dataSize <= 2 ? value | globals.usagePage : value, item.dataSize))
        case 0x18: locals.usageMinimum = item.dataSize <= 2 ? value | globals.usagePage : value
        case 0x28:
            locals.usageMaximum = item.dataSize <= 2 ? value | globals.usagePage : value
            locals.usageMaximumDataSize = item.dataSize
        case 0x38, 0x48, 0x58, 0x78, 0x88, 0x98, 0xA8: break // designators, strings, delimiters: no effect on layout
        default:
            throw .unknownItem(tag: item.tag, offset: item.offset)
        }
    }

    /// Usages given before a Usage Page change take the page in force at the main item
    /// (the kernel's hid_concatenate_last_usage_page; hid-tools does the same).
    private mutating func concatenateUsages() {
        let page = globals.usagePage
        if locals.usageMaximum != 0 && locals.usageMaximumDataSize <= 2 && locals.usageMaximum & 0xFFFF_0000 != page {
            locals.usageMaximum = locals.usageMaximum & 0xFFFF | page
            locals.usageMinimum = locals.usageMinimum & 0xFFFF | page
        }
        var i = locals.usages.count - 1
        while i >= 0 {
            let usage = locals.usages[i]
            if usage.dataSize <= 2 {
                if usage.value & 0xFFFF_0000 == page { break }
                locals.usages[i].value = usage.value & 0xFFFF | page
            }
            i -= 1
        }
    }

    private mutating func addFields(_ kind: ReportKind, _ item: DescriptorItem) throws(DescriptorError) {
        let key = ReportKey(kind: kind, id: reportID)
        let index: Int
        if let existing = layoutIndex[key] {
            index = existing
        } else {
            index = layouts.count
            layoutIndex[key] = index
            let id = reportID >= 0 ? ReportID(UInt8(reportID)) : nil
            layouts.append(ReportLayout(kind: kind, id: id, application: globals.application.map(Usage.init(rawValue:)),
                                        fields: [], sizeBits: id == nil ? 0 : 8))
        }
        concatenateUsages()
        defer { locals.reset() }

        let flags = MainItemFlags(rawValue: item.unsignedValue)
        let size = globals.reportSize
        let count = globals.reportCount
        let added = size * count
        guard layouts[index].sizeBits + added <= Self.maximumReportBits else {
            throw .reportTooLarge(reportID: reportID, bits: layouts[index].sizeBits + added, limit: Self.maximumReportBits)
        }

        let minimum = globals.logicalMinimum
        var template = ReportField(
            usagePage: UInt16(truncatingIfNeeded: globals.usagePage >> 16),
            usage: Usage(rawValue: locals.usages.first?.value ?? locals.usageMinimum),
            arrayUsages: nil, startBit: 0, sizeBits: size, count: 1,
            logicalMinimum: minimum, logicalMaximum: Self.resolved(globals.logicalMaximumItem, minimum: minimum),
            physicalMinimum: globals.physicalMinimum,
            physicalMaximum: Self.resolved(globals.physicalMaximumItem, minimum: globals.physicalMinimum),
            unit: globals.unit, unitExponent: globals.unitExponent, flags: flags,
            application: globals.application.map(Usage.init(rawValue:)),
            logicalCollection: globals.logical.map(Usage.init(rawValue:)), collections: collections)

        var newFields: [ReportField] = []
        let usesRange = locals.usageMinimum != 0 && locals.usageMaximum != 0
        if flags.contains(.constant) || flags.contains(.variable) {
            if usesRange || !locals.usages.isEmpty {
                guard fieldTotal + count <= Self.maximumFields else { throw .tooManyFields(limit: Self.maximumFields) }
                newFields.reserveCapacity(count)
                var usage = locals.usageMinimum
                for i in 0..<count {
                    if usesRange {
                        template.usage = Usage(rawValue: usage)
                        if usage < locals.usageMaximum { usage += 1 }
                    } else {
                        template.usage = Usage(rawValue: locals.usages[min(i, locals.usages.count - 1)].value)
                    }
                    newFields.append(template)
                }
            } else {
                // Padding (or a usage-less variable): one field covering all of it.
                template.sizeBits = size * count
                newFields.append(template)
            }
        } else {
            // Data array: values select usages. Its own usage is the enclosing logical or application collection.
            if let logical = globals.logical, logical != 0 {
                template.usage = Usage(rawValue: logical)
            } else if let application = globals.application {
                template.usage = Usage(rawValue: application)
            }
            if usesRange {
                let span = locals.usageMaximum >= locals.usageMinimum ? Int(locals.usageMaximum - locals.usageMinimum) + 1 : 0
                guard span <= Self.maximumUsagesPerItem else {
                    throw .tooManyUsages(count: span, offset: item.offset, limit: Self.maximumUsagesPerItem)
                }
                template.arrayUsages = (0..<span).map { Usage(rawValue: locals.usageMinimum + UInt32($0)) }
            } else {
                template.arrayUsages = locals.usages.map { Usage(rawValue: $0.value) }
            }
            template.count = count
            newFields.append(template)
        }
        fieldTotal += newFields.count
        guard fieldTotal <= Self.maximumFields else { throw .tooManyFields(limit: Self.maximumFields) }
        for var field in newFields {
            field.startBit = layouts[index].sizeBits
            layouts[index].sizeBits += field.sizeBits * field.count
            layouts[index].fields.append(field)
        }
    }
}
