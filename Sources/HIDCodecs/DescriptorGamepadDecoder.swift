/// A gamepad whose report layout comes from its own report descriptor: sticks, triggers, hat and
/// buttons found by usage, each report compiled once into a `CompiledReportPlan`. For pads whose
/// layout moves with their firmware, the Xbox over Bluetooth above all (its report 0x01 grew from
/// 17 to 39+ bytes across firmware versions, and the guide button moved between reports).
/// Decoding writes only what a report carries into the state, and a button is held while any
/// report last said so: the old firmware sends its Xbox button in report 0x02 while report
/// 0x01's button 13 stays 0, and neither may release the other's press.
public struct DescriptorGamepadDecoder: Sendable {
    public enum Control: Sendable, Equatable {
        case leftX, leftY, rightX, rightY, leftTrigger, rightTrigger, hat
        case button(GamepadButtons)
        /// Generic Device Controls' Battery Strength: its logical range is empty to full.
        case batteryStrength
    }

    /// Which usage is which control, for one kind of pad.
    public struct UsageMap: Sendable {
        public var controls: [(usage: Usage, control: Control)]
        public init(_ controls: [(usage: Usage, control: Control)]) { self.controls = controls }
        func control(for usage: Usage) -> Control? { controls.first { $0.usage == usage }?.control }
    }

    struct Read: Sendable {
        var valueIndex: Int
        var control: Control
        var minimum: Int64
        var maximum: Int64
    }

    struct Report: Sendable {
        var id: UInt8?
        var plan: CompiledReportPlan
        var reads: [Read]
    }

    private let reports: [Report]
    private var values: [Int64]
    /// The buttons each report last held.
    private var heldByReport: [GamepadButtons]

    /// Nil when no input report of `descriptor` carries a control of `map`.
    public init?(descriptor: ReportDescriptor, map: UsageMap) {
        var reports: [Report] = []
        for layout in descriptor.input {
            let plan = CompiledReportPlan(layout: layout)
            var reads: [Read] = []
            for (index, field) in layout.fields.enumerated() where !field.isConstant && !field.isArray && field.count == 1 {
                guard let control = map.control(for: field.usage) else { continue }
                reads.append(Read(valueIndex: plan.valueRange(ofField: index).lowerBound, control: control,
                                  minimum: field.logicalMinimum, maximum: field.logicalMaximum))
            }
            if !reads.isEmpty { reports.append(Report(id: layout.id?.rawValue, plan: plan, reads: reads)) }
        }
        guard !reports.isEmpty else { return nil }
        self.reports = reports
        values = [Int64](repeating: 0, count: reports.map(\.plan.valueCount).max() ?? 0)
        heldByReport = [GamepadButtons](repeating: [], count: reports.count)
    }

    /// Decodes one report into `state`; reports without a control of the map (vendor ones) are
    /// `unknownReport`. Allocates nothing.
    public mutating func decode(_ report: UnsafeRawBufferPointer, into state: inout GamepadState, kind: PadKind) throws(InputReportError) {
        guard let first = report.first else { throw .empty }
        guard let which = reports.firstIndex(where: { $0.id == nil || $0.id == first }) else {
            throw .unknownReport(id: first, length: report.count, kind: kind)
        }
        let entry = reports[which]
        do throws(GenericDecodeError) {
            try values.withUnsafeMutableBufferPointer { (storage) throws(GenericDecodeError) in try entry.plan.decode(report, into: storage) }
        } catch {
            throw .tooShort(id: first, got: report.count, need: entry.plan.layout.sizeBytes)
        }
        state.format = .hidDescriptor
        var buttons: GamepadButtons = []
        for read in entry.reads {
            let value = values[read.valueIndex]
            switch read.control {
            case .leftX: state.leftStick.x = Self.scale(value, read, to: 65535)
            case .leftY: state.leftStick.y = Self.scale(value, read, to: 65535)
            case .rightX: state.rightStick.x = Self.scale(value, read, to: 65535)
            case .rightY: state.rightStick.y = Self.scale(value, read, to: 65535)
            case .leftTrigger:
                state.l2 = UInt8(Self.scale(value, read, to: 255))
                state.l2Fine = read.maximum - read.minimum > 255 ? Self.scale(value, read, to: 65535) : nil
            case .rightTrigger:
                state.r2 = UInt8(Self.scale(value, read, to: 255))
                state.r2Fine = read.maximum - read.minimum > 255 ? Self.scale(value, read, to: 65535) : nil
            case .hat:
                // A hat's logical minimum is "up"; outside the range is its null state (nothing pressed).
                let step = value - read.minimum
                state.dpad = (0...7).contains(step) && value <= read.maximum ? DPad(rawValue: UInt8(step)) ?? .none : .none
            case .button(let button):
                if value != 0 { buttons.formUnion(button) }
            case .batteryStrength:
                // The report says how full, not whether it charges.
                state.battery = BatteryStatus(percent: UInt8(Self.scale(value, read, to: 100)), state: .unknown)
            }
        }
        heldByReport[which] = buttons
        state.buttons = heldByReport.reduce([]) { $0.union($1) }
    }

    /// `value` from the field's logical range to 0...top, rounded to nearest.
    static func scale(_ value: Int64, _ read: Read, to top: Int64) -> UInt16 {
        let span = read.maximum - read.minimum
        guard span > 0 else { return 0 }
        let clamped = min(max(value, read.minimum), read.maximum) - read.minimum
        return UInt16(truncatingIfNeeded: (clamped * top + span / 2) / span)
    }
}
