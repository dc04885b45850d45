import HIDCodecs
/// Encodes and decodes `WireMessage`s inside a datagram payload: `version u8`, then messages.
public enum WireCodec {
    /// Room for a name on the wire; longer names are cut at a character boundary.
    public static let maxNameBytes = 64

    public static func beginPayload(_ w: inout WireWriter) throws(WireError) { try w.u8(wireVersion) }

    /// One message: its type, its length, its body. Allocates nothing.
    public static func encode(_ message: WireMessage, into w: inout WireWriter) throws(WireError) {
        switch message {
        case .arrival(let a): try encode(a, into: &w)
        case .removal(let slot): try encode(Removal(slot: slot), into: &w)
        case .state(let s): try encode(s, into: &w)
        case .touch(let t): try encode(t, into: &w)
        case .motion(let m): try encode(m, into: &w)
        case .battery(let b): try encode(b, into: &w)
        case .ping(let p): try encode(Ping(probe: p), into: &w)
        case .rumble(let r): try encode(r, into: &w)
        case .hidOutput(let h): try encode(h, into: &w)
        case .motionRate(let m): try encode(m, into: &w)
        case .pong(let p): try encode(Pong(probe: p), into: &w)
        case .haptics(let h): try encode(h, into: &w)
        case .speaker(let f): try encode(f, into: &w)
        case .microphone(let f): try encode(f, into: &w)
        case .microphoneRequest(let m): try encode(m, into: &w)
        case .trackpadPulse(let p): try encode(p, into: &w)
        }
    }

    /// A message of a known type, without building a `WireMessage`: the per-report path.
    @inline(__always)
    public static func encode<Body: WireMessageBody>(_ body: Body, into w: inout WireWriter) throws(WireError) {
        try w.u8(Body.wireType.rawValue)
        let lengthAt = try w.reserveU16()
        let start = w.count
        try body.write(into: &w)
        w.patchU16(at: lengthAt, UInt16(w.count - start))
    }

    /// The longest prefix of valid UTF-8 `bytes` that fits, never splitting a character.
    static func utf8Prefix(_ bytes: [UInt8], maxBytes: Int) -> [UInt8] {
        var end = min(bytes.count, maxBytes)
        guard end < bytes.count else { return bytes }
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }  // back to the lead byte of the cut character
        return Array(bytes[0..<end])
    }

    public struct Counters: Equatable, Sendable {
        public var messages = 0
        public var unknownTypes = 0
        public var malformed = 0
        public var unknownVersions = 0
        public init() {}
    }

    /// Calls `body` for each message of a payload. Unknown types are skipped; a message that is
    /// malformed is dropped and counted, and the rest of the payload still decodes.
    public static func decode(_ payload: UnsafeRawBufferPointer, counters: inout Counters, _ body: (WireMessage) -> Void) {
        var r = WireReader(payload)
        guard let version = try? r.u8(), version == wireVersion else { counters.unknownVersions += 1; return }
        while r.remaining > 0 {
            guard let typeByte = try? r.u8(), let length = try? r.u16(), let bodyBytes = try? r.slice(Int(length)) else {
                counters.malformed += 1
                return
            }
            guard let type = WireMessageType(rawValue: typeByte) else { counters.unknownTypes += 1; continue }
            do {
                body(try decodeBody(type, WireReader(bodyBytes)))
                counters.messages += 1
            } catch {
                counters.malformed += 1
            }
        }
    }

    static func featureReport(_ r: inout WireReader) throws(WireError) -> FeatureReportBytes {
        let length = Int(try r.u8())
        guard length <= FeatureReportBytes.capacity else { throw .malformed("a feature report longer than \(FeatureReportBytes.capacity) bytes") }
        return FeatureReportBytes(try r.slice(length))
    }

    static func decodeBody(_ type: WireMessageType, _ reader: WireReader) throws(WireError) -> WireMessage {
        var r = reader
        switch type {
        case .arrival:
            let slot = try WireLimits.checkSlot(try r.u8())
            let typeByte = try r.u8()
            guard let type = PadKind(rawValue: typeByte) else { throw .malformed("pad type \(typeByte)") }
            let vendor = try r.u16(), product = try r.u16()
            let caps = WireCapabilities(rawValue: try r.u32())
            let nameLength = Int(try r.u8())
            guard nameLength <= maxNameBytes else { throw .malformed("pad name longer than \(maxNameBytes) bytes") }
            let name = try WireLimits.checkName(try r.slice(nameLength))
            var identity = PadIdentity()
            if r.remaining > 0 { identity.calibration = try featureReport(&r) }
            if r.remaining > 0 { identity.firmware = try featureReport(&r) }
            if r.remaining > 0 { identity.unit = try featureReport(&r) }
            return .arrival(PadArrival(slot: slot, type: type, vendorID: vendor,
                                       productID: product, capabilities: caps, name: name, identity: identity))
        case .removal:
            return .removal(try WireLimits.checkSlot(try r.u8()))
        case .state:
            let slot = try WireLimits.checkSlot(try r.u8()), seq = WireSequence(try r.u16()), buttons = try r.u32(), dpad = try r.u8()
            guard dpad <= 8 else { throw .malformed("d-pad value \(dpad) out of range") }
            guard buttons & ~WireLimits.knownButtons == 0 else { throw .malformed("unknown button bits 0x\(String(buttons, radix: 16))") }
            var state = PadStateSnapshot(slot: slot, sequence: seq, buttons: buttons, dpad: dpad,
                                         leftX: try r.i16(), leftY: try r.i16(), rightX: try r.i16(), rightY: try r.i16(),
                                         l2: try r.u8(), r2: try r.u8())
            if r.remaining >= 4 {
                state.l2Fine = try WireLimits.checkFineTrigger(try r.u16(), coarse: state.l2)
                state.r2Fine = try WireLimits.checkFineTrigger(try r.u16(), coarse: state.r2)
            }
            return .state(state)
        case .touch:
            let slot = try WireLimits.checkSlot(try r.u8()), seq = WireSequence(try r.u16())
            func contact() throws(WireError) -> WireTouchContact {
                let id = try r.u8(), active = try r.u8()
                guard active <= 1 else { throw .malformed("touch state \(active)") }
                let contact = WireTouchContact(id: id, active: active == 1, x: try r.u16(), y: try r.u16())
                try WireLimits.checkTouch(contact)
                return contact
            }
            var touch = TouchSnapshot(slot: slot, sequence: seq, first: try contact(), second: try contact())
            if r.remaining >= 4 {
                touch.first.pressure = try WireLimits.checkPressure(try r.u16(), of: touch.first)
                touch.second.pressure = try WireLimits.checkPressure(try r.u16(), of: touch.second)
            }
            return .touch(touch)
        case .motion:
            var batch = MotionBatch(slot: try WireLimits.checkSlot(try r.u8()))
            let count = Int(try r.u8())
            guard count <= MotionBatch.capacity else { throw .malformed("\(count) motion samples in one batch") }
            for _ in 0..<count {
                let sample = WireMotionSample(timestampMicros: try r.u32(), gyroX: try r.f32(), gyroY: try r.f32(), gyroZ: try r.f32(),
                                              accelX: try r.f32(), accelY: try r.f32(), accelZ: try r.f32())
                try WireLimits.checkMotion(sample)
                _ = batch.append(sample)
            }
            return .motion(batch)
        case .battery:
            let slot = try WireLimits.checkSlot(try r.u8()), percent = try r.u8(), state = try r.u8()
            guard percent <= 100 else { throw .malformed("battery at \(percent) %") }
            guard state <= WireLimits.maxChargingState else { throw .malformed("charging state \(state)") }
            return .battery(BatteryReport(slot: slot, percent: percent, state: state))
        case .ping:
            var probe = Probe(id: try r.u32(), sentMicros: try r.u64())
            if r.remaining >= LinkFigures.wireSize {
                probe.figures = LinkFigures(roundTripMicros: try r.u32(), jitterMicros: try r.u32(), lossToHostPermille: try r.u16(), lossToClientPermille: try r.u16())
                guard probe.figures.lossToHostPermille <= 1000, probe.figures.lossToClientPermille <= 1000 else { throw .malformed("a loss over 1000 per mille") }
            }
            probe.padding = UInt16(r.remaining)
            return .ping(probe)
        case .pong:
            var probe = Probe(id: try r.u32(), sentMicros: try r.u64())
            if r.remaining >= PingTally.wireSize {
                probe.tally = PingTally(received: try r.u32(), highestID: try r.u32(), reordered: try r.u32(), duplicates: try r.u32())
            }
            probe.padding = UInt16(r.remaining)
            return .pong(probe)
        case .rumble:
            let lease = RumbleLease(slot: try WireLimits.checkSlot(try r.u8()), sequence: WireSequence(try r.u16()), low: try r.u16(), high: try r.u16(),
                                    leftTrigger: try r.u16(), rightTrigger: try r.u16(), ttlMillis: try r.u16())
            guard lease.ttlMillis <= WireLimits.maxRumbleTTLMillis else { throw .malformed("a rumble lease of \(lease.ttlMillis) ms") }
            return .rumble(lease)
        case .hidOutput:
            var h = HIDOutputMessage(slot: try WireLimits.checkSlot(try r.u8()), sequence: WireSequence(try r.u16()))
            let fields = try r.u8()
            guard fields & ~WireLimits.knownOutputFields == 0 else { throw .malformed("unknown output fields 0x\(String(fields, radix: 16))") }
            h.fields = HIDOutputMessage.Fields(rawValue: fields)
            h.red = try r.u8(); h.green = try r.u8(); h.blue = try r.u8(); h.playerLEDMask = try r.u8(); h.micLED = try r.u8()
            h.leftTrigger = TriggerBlock(Array(try r.slice(11)))
            h.rightTrigger = TriggerBlock(Array(try r.slice(11)))
            for (field, block) in [(HIDOutputMessage.Fields.leftTrigger, h.leftTrigger), (.rightTrigger, h.rightTrigger)] where h.fields.contains(field) {
                // Debug modes wedge the trigger until the pad is reset; an all-zero block is no effect at all.
                if (0xFC...0xFE).contains(block.mode) { throw .malformed("trigger debug mode 0x\(String(block.mode, radix: 16)) refused") }
                if block.array.allSatisfy({ $0 == 0 }) { throw .malformed("empty trigger block") }
            }
            return .hidOutput(h)
        case .motionRate:
            let request = MotionRateRequest(slot: try WireLimits.checkSlot(try r.u8()), hertz: try r.u16())
            guard request.hertz <= WireLimits.maxMotionHertz else { throw .malformed("a motion rate of \(request.hertz) Hz") }
            return .motionRate(request)
        case .haptics:
            return .haptics(try HapticsBlock.decode(&r))
        case .speaker:
            return .speaker(try SpeakerFrame.decode(&r))
        case .microphone:
            return .microphone(try MicrophoneFrame.decode(&r))
        case .microphoneRequest:
            return .microphoneRequest(try MicrophoneRequest.decode(&r))
        case .trackpadPulse:
            return .trackpadPulse(try TrackpadPulse.decode(&r))
        }
    }
}
