/// Packs messages into as few payloads as fit a datagram, handing each full payload to `emit`.
public enum WirePayloads {
    public static func pack(_ messages: [WireMessage], into buffer: inout [UInt8], emit: (UnsafeRawBufferPointer) -> Void) {
        buffer.withUnsafeMutableBytes { raw in
            var w = WireWriter(raw)
            try? WireCodec.beginPayload(&w)
            var pending = 0
            for message in messages {
                let before = w
                do {
                    try WireCodec.encode(message, into: &w)
                    pending += 1
                } catch {
                    // No room left: send what is there and put this message in a fresh payload.
                    w = before
                    if pending > 0 { emit(UnsafeRawBufferPointer(rebasing: raw[0..<w.count])) }
                    w = WireWriter(raw)
                    try? WireCodec.beginPayload(&w)
                    pending = (try? WireCodec.encode(message, into: &w)) == nil ? 0 : 1
                }
            }
            if pending > 0 { emit(UnsafeRawBufferPointer(rebasing: raw[0..<w.count])) }
        }
    }
}
