import HIDCodecs

/// The total trigger-block parser (a typed effect must re-encode to its own block) and the
/// dualsensectl grammar parser.
func fuzzTrigger(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    if bytes.count >= 11, let effect = try? TriggerEffect(block: Array(bytes[0..<11])) {
        guard (try? effect.encoded()) == Array(bytes[0..<11]) else { fatalError("parsed effect does not re-encode to its block") }
    }
    let words = String(decoding: bytes, as: UTF8.self).split(separator: " ").map(String.init)
    if let command = try? TriggerCommand(arguments: words) { _ = try? command.effect.encoded() }
}
