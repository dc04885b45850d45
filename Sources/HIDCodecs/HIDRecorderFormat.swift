/// The comment lines hid-recorder writes, from our own descriptor parser: the device header (name and the
/// descriptor item by item, hid-tools' `hidraw.py` `dump` with `hid.py` `dump_rdesc_array`, also what hid-decode
/// prints) and the decoded report above each `E:` line (`hid.py` `format_report`, split over lines the way
/// `_dump_event` does). Lines are comment bodies, without the leading `# ` that `HIDRecording` writes.
///
/// Known differences from hid-tools 0.12, all outside what game controllers declare: usages of pages whose names
/// `UsageTables.swift` does not carry (sensors, digitizers, telephony, …) print as hex where hid-tools names them;
/// fields wider than 64 bits print their low 64 bits; and items hid-tools cannot parse at all (reserved tags,
/// unit systems above 4, collection types above 0xff) get a best-effort description where hid-tools stops.
public enum HIDRecorderFormat {
    // MARK: annotating a recording

    /// The device with hid-recorder's header comments (its name, then its descriptor item by item).
    public static func annotated(_ device: RecordedDevice) -> RecordedDevice {
        var device = device
        device.comments = headerComments(name: device.name ?? "", descriptor: device.descriptor)
        return device
    }

    /// The event with hid-recorder's decoded comment lines above it (none when `descriptor` is nil or has no layout for it).
    public static func annotated(_ event: RecordedEvent, descriptor: ReportDescriptor?) -> RecordedEvent {
        var event = event
        event.comments = descriptor.map { eventComments(event.data, descriptor: $0) } ?? []
        return event
    }

    // MARK: device header

    /// The comment lines hid-recorder writes before `R:`: the device name, the descriptor dump, an empty line.
    public static func headerComments(name: String, descriptor: [UInt8]) -> [String] {
        [name] + descriptorDump(descriptor) + [""]
    }

    /// One line per descriptor item, e.g. `0x05, 0x01,                    // Usage Page (Generic Desktop)        0`.
    /// Empty when the bytes do not split into items.
    public static func descriptorDump(_ bytes: [UInt8]) -> [String] {
        guard let items = try? DescriptorTokenizer.items(bytes) else { return [] }
        var lines: [String] = []
        var indent = 0
        var usagePage: UInt32 = 0            // the Usage Page item's value, restored by Pop as hid-tools does
        var pushedPages: [UInt32] = []
        for item in items {
            let raw = bytes[item.offset...item.offset + item.dataSize].map { "0x" + hex($0, width: 2) }.joined(separator: ", ") + ","
            let description: String
            (description, indent) = describe(item, indent: indent, usagePage: usagePage)
            switch item.tag {
            case 0x04: usagePage = item.unsignedValue
            case 0xA4: pushedPages.append(usagePage)
            case 0xB4: usagePage = pushedPages.popLast() ?? usagePage
            default: break
            }
            lines.append(padded(raw, to: 30) + " // " + padded(description, to: 35) + " \(item.offset)")
        }
        return lines
    }

    /// hid-tools' `get_human_descr`: the item's text, indented by collection depth, and the depth after it.
    static func describe(_ item: DescriptorItem, indent: Int, usagePage: UInt32) -> (String, Int) {
        let value = item.unsignedValue
        var depth = indent
        var ownIndent = indent
        let text: String
        if let name = numericItemNames[item.tag] {
            let shown: Int64
            switch item.tag {
            case 0x14, 0x34: shown = Int64(item.signedValue)                         // Logical/Physical Minimum
            case 0x54: shown = value > 7 ? Int64(value) - 16 : Int64(value)        // Unit Exponent
            default: shown = Int64(value)
            }
            text = "\(name) (\(shown))"
        } else {
            switch item.tag {
            case 0x80, 0x90, 0xB0: text = "\(mainItemNames[item.tag]!) (\(mainItemFlags(value)))"
            case 0xA0:
                text = "Collection (\(collectionName(value)))"
                depth += 1
            case 0xC0:
                depth -= 1
                ownIndent = depth
                text = "End Collection"
            case 0x04: text = "Usage Page (\(pageItemName(value)))"
            case 0x08: text = "Usage (\(usageItemName(value, page: usagePage)))"
            case 0x64: text = "Unit (\(unitDescription(value)))"
            default: text = plainItemNames[item.tag] ?? "Reserved item 0x\(hex(item.tag, width: 2))"
            }
        }
        return (String(repeating: " ", count: max(0, ownIndent)) + text, depth)
    }

    /// Items shown with their value.
    static let numericItemNames: [UInt8: String] = [
        0x84: "Report ID", 0x18: "Usage Minimum", 0x28: "Usage Maximum", 0x14: "Logical Minimum", 0x34: "Physical Minimum",
        0x24: "Logical Maximum", 0x44: "Physical Maximum", 0x74: "Report Size", 0x94: "Report Count", 0x54: "Unit Exponent",
    ]
    static let mainItemNames: [UInt8: String] = [0x80: "Input", 0x90: "Output", 0xB0: "Feature"]
    /// Items shown by name only.
    static let plainItemNames: [UInt8: String] = [
        0xA4: "Push", 0xB4: "Pop", 0x38: "Designator Index", 0x48: "Designator Minimum", 0x58: "Designator Maximum",
        0x78: "String Index", 0x88: "String Minimum", 0x98: "String Maximum", 0xA8: "Delimiter",
    ]

    /// Input/Output/Feature flags as hid-tools abbreviates them (bit 0, 1, 2 always; the others when set).
    static func mainItemFlags(_ value: UInt32) -> String {
        var text = (value & 0x01 != 0 ? "Cnst," : "Data,") + (value & 0x02 != 0 ? "Var," : "Arr,") + (value & 0x04 != 0 ? "Rel" : "Abs")
        for (bit, name) in [(3, "Wrap"), (4, "NonLin"), (5, "NoPref"), (6, "Null"), (7, "Vol"), (8, "Buff")] where value & (1 << bit) != 0 {
            text += "," + name
        }
        return text
    }

    static let collectionTypes = ["Physical", "Application", "Logical", "Report", "Named_array", "Usage_switch", "Usage_modifier"]

    static func collectionName(_ value: UInt32) -> String {
        if value < collectionTypes.count { return collectionTypes[Int(value)] }
        return ((0x80...0xFF).contains(value) ? "Vendor_defined 0x" : "Reserved 0x") + String(value, radix: 16)
    }

    /// hid-tools looks a page up with a value whose low 16 bits are zero shifted down (a 4-byte page item).
    static func tablePage(_ value: UInt32) -> UInt32 { value & 0xFFFF_0000 == value ? value >> 16 : value }

    static func pageItemName(_ value: UInt32) -> String {
        let page = tablePage(value)
        if page <= 0xFFFF, let name = UsageNames.pageName(UInt16(page)) { return name }
        return "Vendor Usage Page 0x" + hex(value, width: 2)
    }

    /// A Usage item's name on the current page; a 4-byte usage naming that same page is looked up by its low half.
    static func usageItemName(_ value: UInt32, page: UInt32) -> String {
        let page = tablePage(page)
        let id = value > 0xFFFF && value & 0xFFFF_0000 == page << 16 ? value & 0xFFFF : value
        if page <= 0xFFFF, id <= 0xFFFF, let name = UsageNames.tableName(page: UInt16(page), id: UInt16(id)) { return name }
        return "Vendor Usage 0x" + hex(value, width: 2)
    }

    /// Unit symbols per unit system (SI linear, SI rotation, English linear, English rotation), for the
    /// length, mass, time, temperature, current and luminous intensity nibbles in that order.
    static let unitSystems = ["SILinear", "SIRotation", "EnglishLinear", "EnglishRotation"]
    static let unitSymbols = [["cm", "rad", "in", "deg"], ["g", "g", "slug", "slug"], ["s", "s", "s", "s"],
                              ["K", "K", "F", "F"], ["A", "A", "A", "A"], ["cd", "cd", "cd", "cd"]]
    static let superscripts: [Character: Character] = [
        "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹", "-": "⁻",
    ]

    /// hid-tools' `HidUnit` text: `EnglishRotation: deg`, `SILinear: cm * s⁻²`, or `None`.
    static func unitDescription(_ value: UInt32) -> String {
        func nibble(_ index: Int) -> Int { Int((value >> (4 * UInt32(index))) & 0x0F) }
        let system = nibble(0)
        guard system != 0 else { return "None" }
        guard system <= unitSystems.count else { return "Vendor-defined unit system \(system)" }
        var parts: [String] = []
        for (index, symbols) in unitSymbols.enumerated() {
            let exponent = nibble(index + 1) > 7 ? nibble(index + 1) - 16 : nibble(index + 1)
            guard exponent != 0 else { continue }
            parts.append(symbols[system - 1] + (exponent == 1 ? "" : String(String(exponent).map { superscripts[$0]! })))
        }
        return parts.isEmpty ? "None" : unitSystems[system - 1] + ": " + parts.joined(separator: " * ")
    }

    // MARK: decoded reports

    /// The comment lines hid-recorder writes above a report's `E:` line; none when the descriptor has no input
    /// layout for it or the report is shorter than that layout (hid-recorder writes none either).
    public static func eventComments(_ report: [UInt8], descriptor: ReportDescriptor) -> [String] {
        guard !report.isEmpty, let layout = descriptor.layout(.input, for: report), layout.sizeBytes <= report.count else { return [] }
        let lines = reportLines(report, layout: layout)
        // Continuation lines line up one column after the first line's "/", or are indented by 2.
        let firstLine = Array(lines[0].unicodeScalars)
        let indent = firstLine.firstIndex(of: "/").map { $0 + 1 } ?? 2
        return [lines[0]] + lines.dropFirst().map { String(repeating: " ", count: max(0, indent - 1)) + $0 }
    }

    /// hid-tools' `format_report`: the report's fields as text, one line per run of fields in the same collection.
    public static func reportLines(_ report: [UInt8], layout: ReportLayout) -> [String] {
        var output = ""
        var separator = ""
        if let id = layout.id {
            output += "ReportID: \(id.rawValue) "
            separator = "/"
        }
        var seenUsageNames: [String] = []
        var previousCollections: CollectionCounts? = nil
        var previous: ReportField? = nil
        for field in layout.fields {
            if field.isConstant {
                output += "\(separator) # "
                continue
            }
            let values = (0..<field.count).map { fieldValue(report, field: field, index: $0) }
            if !field.isArray {
                var label: String
                let seenName: String
                if UsageNames.pageName(field.usagePage) == "Button" {
                    // Only the first button is labelled; the others follow it without a separator.
                    if UsageNames.name(of: field.usage) == "B1" {
                        seenName = "Button"; label = " Button:"
                    } else {
                        seenName = ""; label = ""; separator = ""
                    }
                } else {
                    seenName = multitouchName(UsageNames.name(of: field.usage), seen: seenUsageNames)
                    label = " \(seenName):"
                }
                if let previousCollections, previousCollections != field.collections {
                    seenUsageNames = []
                    output += "\n"
                }
                previousCollections = field.collections
                seenUsageNames.append(seenName)
                if let previous, previous.flags == field.flags, previous.usage == field.usage {
                    separator = ","; label = ""   // the same usage again: its value follows without repeating the name
                }
                output += "\(separator)\(label) \(formatted(values[0], width: field.sizeBits > 1 ? decimalDigits(ofPowerOfTwo: field.sizeBits) + 1 : 0)) "
            } else {
                let name = arrayName(field)
                let selected = values.map { value -> String in
                    guard let value, value >= field.logicalMinimum, value <= field.logicalMaximum else { return "" }
                    var usage = value < 0 ? "-" + String(-value, radix: 16) : hex(value, width: 2)
                    let index = Int(value - field.logicalMinimum)
                    if !name.lowercased().contains("vendor"), let usages = field.arrayUsages, index < usages.count {
                        let usageName = UsageNames.name(of: usages[index])
                        usage = usageName.lowercased().contains("no event indicated") ? "" : usageName
                    }
                    return "'\(usage)'"
                }
                output += "\(separator)\(name) [\(selected.joined(separator: ", "))] "
            }
            separator = "|"
            previous = field
        }
        return output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// hid-tools' `_get_value`: the field's bits from the report, bits past its end read as 0; nil (hid-tools'
    /// "<.>") when the field starts past the end. Sign-extended when the logical minimum is negative.
    static func fieldValue(_ report: [UInt8], field: ReportField, index: Int) -> Int64? {
        let start = field.startBit + field.sizeBits * index
        guard start >= 0, start / 8 < report.count else { return nil }
        let width = min(field.sizeBits, 64)
        var value: UInt64 = 0
        for bit in 0..<width {
            let absolute = start + bit
            guard absolute / 8 < report.count else { break }
            value |= UInt64((report[absolute / 8] >> UInt8(absolute % 8)) & 1) << UInt64(bit)
        }
        if field.isSigned && width < 64 && value & (1 << UInt64(width - 1)) != 0 { value |= ~UInt64(0) << UInt64(width) }
        return Int64(bitPattern: value)
    }

    /// Python's `"{:Nd}".format(v)` (right-aligned in N columns), or `<.>` for a value past the report's end.
    static func formatted(_ value: Int64?, width: Int) -> String {
        guard let value else { return "<.>" }
        return padded(String(value), to: width, alignRight: true)
    }

    /// The number of decimal digits of 2^bits, which sizes hid-tools' value columns.
    static func decimalDigits(ofPowerOfTwo bits: Int) -> Int {
        if bits < 63 { return String(1 << bits).count }
        return Int(Double(bits) * 0.301_029_995_663_981_2) + 1   // 2^n is never a power of ten, so this is exact
    }

    /// hid-tools renames a repeated X or Y to CX / CY (multitouch contact coordinates).
    static func multitouchName(_ name: String, seen: [String]) -> String {
        guard seen.contains(name) else { return name }
        if name == "X" && (!seen.contains("Y") || seen.contains("CY")) { return "CX" }
        if name == "Y" && (!seen.contains("X") || seen.contains("CX")) { return "CY" }
        return name
    }

    /// An array field is named after its logical collection (looked up, as hid-tools does, by the usage's low
    /// byte only), else its usage page, else "Array".
    static func arrayName(_ field: ReportField) -> String {
        if let logical = field.logicalCollection {
            if let name = UsageNames.tableName(page: logical.page, id: logical.id & 0xFF), !name.isEmpty { return name }
            return "0x" + UsageNames.hexDigits(logical.rawValue, minimumWidth: 4)
        }
        if let page = UsageNames.pageName(field.usagePage), !page.isEmpty { return page }
        return "Array"
    }

    static func hex(_ value: some BinaryInteger, width: Int) -> String { UsageNames.hexDigits(value, minimumWidth: width) }

    /// Python's `str.ljust`/`rjust` by code points (hid-tools counts superscript digits as one column each).
    static func padded(_ text: String, to width: Int, alignRight: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.unicodeScalars.count))
        return alignRight ? fill + text : text + fill
    }
}
