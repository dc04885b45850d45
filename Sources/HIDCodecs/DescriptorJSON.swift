/// The descriptor as JSON in the shape of hid-tools' dump used by our fixtures:
/// `{"reports": {"input": [...], "output": [...], "feature": [...]}}`, each report with
/// `report_id, size_bytes, size_bits, application, fields`, and runs of identical, contiguous
/// fields folded into one entry with `n` repetitions.
public enum DescriptorJSON {
    public static func encode(_ descriptor: ReportDescriptor) -> JSONValue {
        .object([("reports", .object(ReportKind.allCases.map { kind in
            (kind.rawValue, .array(descriptor.reports(kind).map(encode)))
        }))])
    }

    public static func encode(_ layout: ReportLayout) -> JSONValue {
        .object([
            ("report_id", layout.id.map { .integer($0.rawValue) } ?? .null),
            ("size_bytes", .integer(layout.sizeBytes)),
            ("size_bits", .integer(layout.sizeBits)),
            ("application", .string(layout.application.map(UsageNames.name(of:)) ?? "Vendor")),
            ("fields", .array(foldedFields(layout.fields).map { encode($0.field, repetitions: $0.repetitions) })),
        ])
    }

    /// Consecutive fields whose JSON differs only in the start bit, and that follow each other without a gap
    /// (the collections they sit in are not part of the JSON, so they do not split a run).
    public static func foldedFields(_ fields: [ReportField]) -> [(field: ReportField, repetitions: Int)] {
        var runs: [(field: ReportField, repetitions: Int)] = []
        for field in fields {
            if let last = runs.last {
                var shifted = last.field
                shifted.startBit = field.startBit
                shifted.collections = field.collections
                shifted.logicalCollection = field.logicalCollection
                let contiguous = last.field.startBit + last.field.sizeBits * last.field.count * last.repetitions == field.startBit
                if contiguous && shifted == field {
                    runs[runs.count - 1].repetitions += 1
                    continue
                }
            }
            runs.append((field, 1))
        }
        return runs
    }

    static func encode(_ field: ReportField, repetitions: Int) -> JSONValue {
        let usages: JSONValue = field.isArray ? .array((field.arrayUsages ?? []).map { .integer($0.rawValue) }) : .null
        return .object([
            ("usage_page", .integer(UInt32(field.usagePage) << 16)),
            ("usage", .integer(field.usage.rawValue)),
            ("usage_name", .string(UsageNames.name(of: field.usage))),
            ("start_bit", .integer(field.startBit)),
            ("size_bits", .integer(field.sizeBits)),
            ("count", .integer(field.count)),
            ("logical_min", .integer(field.logicalMinimum)),
            ("logical_max", .integer(field.logicalMaximum)),
            ("physical_min", .integer(field.physicalMinimum)),
            ("physical_max", .integer(field.physicalMaximum)),
            ("unit", .integer(field.unit)),
            ("unit_exp", .integer(field.unitExponent)),
            ("is_array", .bool(field.isArray)),
            ("is_const", .bool(field.isConstant)),
            ("is_null", .bool(field.hasNullState)),
            ("usages", usages),
            ("n", .integer(repetitions)),
        ])
    }
}
