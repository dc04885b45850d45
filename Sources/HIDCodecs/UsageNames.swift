/// Names for usages and usage pages, spelled as hid-tools spells the HID Usage Tables (`UsageTables.swift`),
/// so what we print can be compared with hid-tools line for line.
public enum UsageNames {
    /// Usage names per page, parsed once from `usageLists`.
    static let usages: [UInt16: [UInt16: String]] = usageLists.mapValues { list in
        var names: [UInt16: String] = [:]
        for line in list.split(separator: "\n") {
            guard let tab = line.firstIndex(of: "\t"), let id = UInt16(line[..<tab], radix: 16) else { continue }
            names[id] = String(line[line.index(after: tab)...])
        }
        return names
    }

    /// The page's name ("Generic Desktop"), nil for pages the tables do not list (vendor pages).
    public static func pageName(_ page: UInt16) -> String? { pageNames[page] }

    /// The usage's own name in the tables ("X", "AC Home"), nil when its page lists no such usage.
    public static func tableName(page: UInt16, id: UInt16) -> String? { usages[page]?[id] }

    /// hid-tools' name of a field's usage: buttons are "B<n>", named usages by name, anything else in hex
    /// with at least 4 digits, like hid-tools: "0xff000020".
    public static func name(of usage: Usage) -> String {
        if usage.page == 0x09 { return "B\(usage.id)" }
        if let name = tableName(page: usage.page, id: usage.id) { return name }
        return "0x" + hexDigits(usage.rawValue, minimumWidth: 4)
    }

    static func hexDigits(_ value: some BinaryInteger, minimumWidth: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, minimumWidth - digits.count)) + digits
    }
}
