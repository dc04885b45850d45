import COpenSSL

/// Keys for one direction of the datagram channel, derived from the TLS session (exporter).
public struct DirectionKeys: Sendable {
    public var key: [UInt8]   // 32 bytes, AES-256-GCM
    public var iv: [UInt8]    // 12 bytes, XORed with the sequence number to make each nonce
    public init(key: [UInt8], iv: [UInt8]) { self.key = key; self.iv = iv }
}

/// Why a datagram was dropped; each is counted, none reaches a virtual pad.
public enum DatagramRejection: Error, Equatable, Sendable, CaseIterable {
    case truncated, notPadgate, wrongSession, replayed, tooOld, forged
    /// A sequence number no honest sender can have reached (`ReplayWindow.maxJump`).
    case implausibleSequence
}

/// A sealed datagram: `"PG" | version u8 | flags u8 | session u32 | sequence u64 | ciphertext | tag(16)`.
/// The 16-byte header is authenticated (AAD); the nonce is `iv XOR (0^4 ‖ sequence)`, so no nonce
/// repeats for a key as long as the sender never reuses a sequence number (it counts up from 1).
public enum DatagramFormat {
    public static let headerSize = 16

    /// The session id a datagram's header names, which picks the key to open it with; nil when the
    /// datagram is shorter than a header. Unauthenticated until the datagram is opened.
    @inline(__always)
    public static func session(of datagram: UnsafeRawBufferPointer) -> UInt32? {
        guard datagram.count >= headerSize else { return nil }
        return UInt32(bigEndian: datagram.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
    }
    public static let tagSize = 16
    public static let overhead = headerSize + tagSize
    public static let magic: (UInt8, UInt8) = (0x50, 0x47)
    public static let version: UInt8 = 1
}

/// AES-256-GCM through OpenSSL's EVP interface. One context per direction, reused for every
/// datagram so that sealing allocates nothing.
final class GCMContext {
    let context: OpaquePointer
    let encrypting: Bool

    init(key: [UInt8], encrypting: Bool) throws {
        guard key.count == 32, let context = EVP_CIPHER_CTX_new() else { throw TransportError.crypto("cannot create an AES-GCM context") }
        self.context = context
        self.encrypting = encrypting
        let ok = key.withUnsafeBufferPointer { keyBytes in
            encrypting
                ? EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, keyBytes.baseAddress, nil)
                : EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, keyBytes.baseAddress, nil)
        }
        guard ok == 1 else { EVP_CIPHER_CTX_free(context); throw TransportError.crypto("AES-256-GCM key setup failed") }
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// Seals `plaintext` in place-adjacent buffers: writes ciphertext to `out` and the tag after it.
    func seal(nonce: UnsafePointer<UInt8>, aad: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
              out: UnsafeMutableRawBufferPointer) -> Bool {
        var length: Int32 = 0
        guard EVP_EncryptInit_ex(context, nil, nil, nil, nonce) == 1,
              EVP_EncryptUpdate(context, nil, &length, aad.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(aad.count)) == 1
        else { return false }
        if plaintext.count > 0 {
            guard EVP_EncryptUpdate(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length,
                                    plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(plaintext.count)) == 1
            else { return false }
        }
        let tail = out.baseAddress!.assumingMemoryBound(to: UInt8.self) + plaintext.count
        guard EVP_EncryptFinal_ex(context, tail, &length) == 1 else { return false }
        return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(DatagramFormat.tagSize), tail) == 1
    }

    /// Opens `ciphertext` + `tag` into `out`; false if the tag does not verify.
    func open(nonce: UnsafePointer<UInt8>, aad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
              tag: UnsafeRawBufferPointer, out: UnsafeMutableRawBufferPointer) -> Bool {
        var length: Int32 = 0
        guard EVP_DecryptInit_ex(context, nil, nil, nil, nonce) == 1,
              EVP_DecryptUpdate(context, nil, &length, aad.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(aad.count)) == 1
        else { return false }
        if ciphertext.count > 0 {
            guard EVP_DecryptUpdate(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length,
                                    ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(ciphertext.count)) == 1
            else { return false }
        }
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(DatagramFormat.tagSize),
                                  UnsafeMutableRawPointer(mutating: tag.baseAddress!)) == 1 else { return false }
        return EVP_DecryptFinal_ex(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self) + ciphertext.count, &length) == 1
    }
}

public enum TransportError: Error, CustomStringConvertible, Equatable {
    case crypto(String)
    case bufferTooSmall
    public var description: String {
        switch self {
        case .crypto(let what): return "crypto: \(what)"
        case .bufferTooSmall: return "datagram buffer too small"
        }
    }
}

/// The sending half of a datagram channel. Runs once per input report: the header and nonce
/// are built in registers and stored whole, so a seal costs little more than OpenSSL's own work.
public final class DatagramSealer {
    let gcm: GCMContext
    let iv: NonceBase
    public let session: UInt32
    /// One sender thread per sealer: no runtime exclusivity check on the per-datagram path.
    @exclusivity(unchecked) public private(set) var sequence: UInt64 = 0

    public init(keys: DirectionKeys, session: UInt32) throws {
        gcm = try GCMContext(key: keys.key, encrypting: true)
        guard let iv = NonceBase(keys.iv) else { throw TransportError.crypto("the datagram IV must be 12 bytes") }
        self.iv = iv
        self.session = session
    }

    /// Seals `payload` into `out` and returns the datagram's length.
    public func seal(_ payload: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws -> Int {
        let total = DatagramFormat.overhead + payload.count
        guard out.count >= total, let base = out.baseAddress else { throw TransportError.bufferTooSmall }
        let next = sequence &+ 1
        sequence = next
        writeHeader(base, session: session, sequence: next)
        var nonce = iv.nonce(sequence: next)
        let ok = withUnsafeBytes(of: &nonce) { n in
            gcm.seal(nonce: n.baseAddress!.assumingMemoryBound(to: UInt8.self), aad: UnsafeRawBufferPointer(start: base, count: DatagramFormat.headerSize),
                     plaintext: payload, out: UnsafeMutableRawBufferPointer(start: base + DatagramFormat.headerSize, count: total - DatagramFormat.headerSize))
        }
        guard ok else { throw TransportError.crypto("AES-GCM seal failed") }
        return total
    }
}

/// The 12-byte IV as three words in memory order; a nonce is it with the sequence number
/// (big-endian) XORed into its last 8 bytes.
struct NonceBase {
    let words: (UInt32, UInt32, UInt32)

    init?(_ iv: [UInt8]) {
        guard iv.count == 12 else { return nil }
        words = iv.withUnsafeBytes { ($0.loadUnaligned(as: UInt32.self), $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self),
                                      $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) }
    }

    @inline(__always)
    func nonce(sequence: UInt64) -> (UInt32, UInt32, UInt32) {
        (words.0, words.1 ^ UInt32(truncatingIfNeeded: sequence >> 32).bigEndian, words.2 ^ UInt32(truncatingIfNeeded: sequence).bigEndian)
    }
}

/// The receiving half: authenticates, decrypts, and refuses replays.
public final class DatagramOpener {
    let gcm: GCMContext
    let iv: NonceBase
    public let session: UInt32
    public private(set) var window = ReplayWindow()
    public private(set) var rejected: [DatagramRejection: Int] = [:]

    public init(keys: DirectionKeys, session: UInt32) throws {
        gcm = try GCMContext(key: keys.key, encrypting: false)
        guard let iv = NonceBase(keys.iv) else { throw TransportError.crypto("the datagram IV must be 12 bytes") }
        self.iv = iv
        self.session = session
        for reason in DatagramRejection.allCases { rejected[reason] = 0 }
    }

    /// Opens `datagram` into `out`; returns the payload length, or nil (counted) if it must be dropped.
    public func open(_ datagram: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int? {
        do { return try openOrThrow(datagram, into: out) } catch {
            rejected[error, default: 0] += 1
            return nil
        }
    }

    func openOrThrow(_ d: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws(DatagramRejection) -> Int {
        guard d.count >= DatagramFormat.overhead else { throw .truncated }
        guard d[0] == DatagramFormat.magic.0, d[1] == DatagramFormat.magic.1, d[2] == DatagramFormat.version else { throw .notPadgate }
        guard UInt32(bigEndian: d.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) == session else { throw .wrongSession }
        let sequence = UInt64(bigEndian: d.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        switch window.check(sequence) {
        case .replayed: throw .replayed
        case .tooOld: throw .tooOld
        case .implausible: throw .implausibleSequence
        case .fresh: break
        }
        let payloadCount = d.count - DatagramFormat.overhead
        guard out.count >= payloadCount else { throw .truncated }
        var nonce = iv.nonce(sequence: sequence)
        let ok = withUnsafeBytes(of: &nonce) { n in
            gcm.open(nonce: n.baseAddress!.assumingMemoryBound(to: UInt8.self), aad: UnsafeRawBufferPointer(rebasing: d[0..<DatagramFormat.headerSize]),
                     ciphertext: UnsafeRawBufferPointer(rebasing: d[DatagramFormat.headerSize..<DatagramFormat.headerSize + payloadCount]),
                     tag: UnsafeRawBufferPointer(rebasing: d[(d.count - DatagramFormat.tagSize)...]), out: out)
        }
        guard ok else { throw .forged }
        window.commit(sequence)
        return payloadCount
    }
}

/// "PG", version, flags 0, then session and sequence big-endian: two stores, no byte loop.
func writeHeader(_ out: UnsafeMutableRawPointer, session: UInt32, sequence: UInt64) {
    let lead = UInt32(DatagramFormat.magic.0) << 24 | UInt32(DatagramFormat.magic.1) << 16 | UInt32(DatagramFormat.version) << 8
    out.storeBytes(of: lead.bigEndian, as: UInt32.self)
    (out + 4).storeBytes(of: session.bigEndian, as: UInt32.self)
    (out + 8).storeBytes(of: sequence.bigEndian, as: UInt64.self)
}
