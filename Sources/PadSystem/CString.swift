extension String {
    /// The text before the first NUL of a buffer a C call filled (`inet_ntop`, `if_indextoname`,
    /// OpenSSL's error strings); the whole buffer if it has none.
    package init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
