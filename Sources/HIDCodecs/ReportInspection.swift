/// Per-report JSON for `padgate inspect`: time, id and length, then the pad's semantic fields when we
/// have a typed decoder for it, or the descriptor's fields otherwise.
public struct ReportInspector: Sendable {
    public let descriptor: ReportDescriptor?
    public private(set) var decoder: ControllerInputDecoder?

    public init(descriptor: ReportDescriptor?, codec: (any PadInputCodec)?) {
        self.descriptor = descriptor
        decoder = codec.map(ControllerInputDecoder.init)
    }

    /// Chooses a typed decoder from the recording's ids when `codecs` knows the pad; a pad read
    /// through its descriptor (an Xbox) shows the descriptor's own fields.
    public init(device: RecordedDevice, codecs: InputCodecCatalogue) {
        let descriptor = try? ReportDescriptor(bytes: device.descriptor)
        let kind = device.vendorID.flatMap { vid in device.productID.flatMap { PadKind(vendorID: vid, productID: $0) } }
        self.init(descriptor: descriptor, codec: kind.flatMap { codecs($0, nil) })
    }

    public mutating func inspect(_ report: [UInt8], time: Double?) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let time { members.append(("time", .double((time * 1_000_000).rounded() / 1_000_000))) }
        members.append(("report_id", report.first.map { .integer($0) } ?? .null))
        members.append(("length", .integer(report.count)))
        if decoder != nil {
            var state = GamepadState()
            do {
                try decoder!.decode(report, into: &state)
                members += Self.semanticFields(state)
                return .object(members)
            } catch {
                // A report the pad's decoder knows but whose CRC fails is corrupt: say so rather than
                // show its bytes through the descriptor as if they meant something.
                if case .badChecksum = error { members.append(("error", .string(error.description))); return .object(members) }
                // Reports the typed decoder does not know (feature replies, other ids) fall through to the descriptor.
                if descriptor == nil { members.append(("error", .string(error.description))); return .object(members) }
            }
        }
        if let descriptor {
            do {
                let (_, fields) = try GenericReportDecoder.decodeInput(report, descriptor: descriptor)
                members.append(("fields", .array(fields.filter { !$0.field.isConstant }.map { decoded in
                    .object([("usage", .string(UsageNames.name(of: decoded.field.usage))),
                             ("usage_code", .integer(decoded.field.usage.rawValue)),
                             ("values", .array(decoded.values.map { .integer($0) }))])
                })))
            } catch {
                members.append(("error", .string(error.description)))
            }
        } else {
            members.append(("error", .string("no descriptor and no known pad kind: nothing to decode with")))
        }
        return .object(members)
    }

    /// `left_stick`/`right_stick` are 0–255 for every known pad (128 ≈ centre); a pad with finer sticks (the Switch
    /// Pro's 12 bits) also gets its native values as `left_stick_raw`/`right_stick_raw`.
    public static func semanticFields(_ s: GamepadState) -> [(String, JSONValue)] {
        let extraBits = s.format.stickBits - 8
        func stick(_ p: StickPosition, shift: Int) -> JSONValue { .array([.integer(p.x >> shift), .integer(p.y >> shift)]) }
        var m: [(String, JSONValue)] = [
            ("format", .string(s.format.description)),
            ("buttons", .array(s.buttons.names.map(JSONValue.string))),
            ("dpad", .string(s.dpad.name)),
            ("left_stick", stick(s.leftStick, shift: extraBits)),
            ("right_stick", stick(s.rightStick, shift: extraBits)),
        ]
        if extraBits > 0 {
            m += [("left_stick_raw", stick(s.leftStick, shift: 0)), ("right_stick_raw", stick(s.rightStick, shift: 0))]
        }
        m += [("l2", .integer(s.l2)), ("r2", .integer(s.r2))]
        if s.hasTouch {
            m.append(("touch", .array([s.touch0, s.touch1].map { t in
                .object([("id", .integer(t.id)), ("active", .bool(t.active)), ("x", .integer(t.x)), ("y", .integer(t.y))]
                        + (t.pressure.map { [("pressure", JSONValue.integer($0))] } ?? []))
            })))
        }
        if s.hasMotion {
            let v = { (v: Vector3) -> JSONValue in .array([.integer(v.x), .integer(v.y), .integer(v.z)]) }
            // gyro/accel: the first sample; motion_samples: every sample the report carried (3 on a Switch Pro, 5 ms apart).
            m.append(("gyro", v(s.gyro)))
            m.append(("accel", v(s.accel)))
            m.append(("motion_samples", .array(s.motion.samples.map { .object([("gyro", v($0.gyro)), ("accel", v($0.accel))]) })))
            m.append(("sensor_time", .integer(s.sensorTimestamp)))
        }
        if let battery = s.battery {
            m.append(("battery", .object([("percent", .integer(battery.percent)), ("charging", .bool(battery.charging))])))
        }
        return m
    }
}
