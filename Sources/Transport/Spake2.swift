// SPAKE2 (RFC 9382), ciphersuite P256-SHA256-HKDF-HMAC, on OpenSSL 3 primitives.
//
// Protocol summary (RFC 9382 §3.3, §4):
//
//   A: x <- [1, p)   pA = x*P + w*M          ──pA──▶
//   B: y <- [1, p)   pB = y*P + w*N          ◀──pB──
//   A: K = x*(pB - w*N)        B: K = y*(pA - w*M)      (cofactor h = 1 for P-256)
//
//   TT = len(A)||A || len(B)||B || len(pA)||pA || len(pB)||pB || len(K)||K || len(w)||w
//        (len = 8-byte little-endian byte count; points are SEC1 uncompressed, 65 bytes;
//         w is 32-byte big-endian)
//   Ke || Ka   = SHA256(TT)                                  (16 + 16 bytes)
//   KcA || KcB = HKDF-SHA256(salt = nil, IKM = Ka, info = "ConfirmationKeys" || AAD, L = 32)
//   MAC A = HMAC-SHA256(KcA, TT),  MAC B = HMAC-SHA256(KcB, TT)
//
// Ke is the session key. Ka/KcA/KcB are only for key confirmation. Each side sends its MAC
// and MUST verify the peer's MAC before using Ke.
//
// Design choices (see also the notes on `ScryptParameters` and `Spake2Error`):
//  * Wire format: SEC1 *uncompressed* points only (0x04 || X || Y, 65 bytes), exactly as in
//    RFC 9382 Appendix B. Compressed points are rejected (the transcript hashes the bytes as
//    sent, so a single canonical encoding avoids ambiguity).
//  * x, y are drawn from [1, p) (the RFC says [0, p); 0 is excluded as it would be useless).
//  * A `Spake2` instance is one-shot: `finish(peerMessage:)` consumes the ephemeral scalar,
//    whether it succeeds or not, so one session yields at most one password guess.
//  * P-256 has cofactor 1, so every on-curve non-identity point is in the prime-order group;
//    no separate subgroup check is needed.
//  * Secret scalar multiplications are done one at a time (`k*P`, `w*M` separately), because
//    OpenSSL only uses its constant-time ladder for single-scalar `EC_POINT_mul` calls.

import COpenSSL
import Foundation
import PadSystem

// MARK: - Errors

/// Everything that can go wrong in a SPAKE2 exchange. Each case says what was wrong.
public enum Spake2Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// The password / PIN was empty.
    case emptyPassword
    /// A password scalar `w` or an ephemeral scalar was not a 32-byte big-endian integer in [1, p).
    case invalidScalar(String)
    /// The peer message did not have the length of an uncompressed P-256 point.
    case invalidMessageLength(expected: Int, actual: Int)
    /// The peer message's SEC1 prefix byte was not 0x04 (uncompressed); 0x02/0x03 (compressed)
    /// and anything else are rejected.
    case unsupportedPointEncoding(prefix: UInt8)
    /// A coordinate of the peer point was >= the field prime.
    case coordinateOutOfRange
    /// The peer point's coordinates do not satisfy the P-256 curve equation.
    case pointNotOnCurve
    /// The peer sent the point at infinity (identity element).
    case identityPoint
    /// The peer's point minus the password mask is the identity (i.e. the peer sent exactly
    /// w*N or w*M), or the resulting shared point K is the identity.
    case degenerateSharedSecret
    /// The peer echoed our own message back to us.
    case reflectedMessage
    /// `finish(peerMessage:)` was already called on this instance (it is one-shot).
    case alreadyFinished
    /// A key-confirmation MAC had the wrong length.
    case invalidConfirmationLength(expected: Int, actual: Int)
    /// The peer's key-confirmation MAC did not verify: wrong password, wrong identities/AAD,
    /// or a tampered exchange. The derived keys MUST NOT be used.
    case confirmationMismatch
    /// An OpenSSL call failed unexpectedly.
    case openSSL(operation: String, detail: String)

    public var description: String {
        switch self {
        case .emptyPassword:
            return "SPAKE2: the password/PIN is empty"
        case .invalidScalar(let why):
            return "SPAKE2: invalid scalar: \(why)"
        case .invalidMessageLength(let expected, let actual):
            return "SPAKE2: peer message is \(actual) bytes; expected \(expected) (uncompressed P-256 point)"
        case .unsupportedPointEncoding(let prefix):
            let hex = String(prefix, radix: 16)
            return "SPAKE2: peer point has SEC1 prefix 0x\(hex); only uncompressed (0x04) points are accepted"
        case .coordinateOutOfRange:
            return "SPAKE2: peer point has a coordinate >= the field prime"
        case .pointNotOnCurve:
            return "SPAKE2: peer point is not on the P-256 curve"
        case .identityPoint:
            return "SPAKE2: peer point is the identity element (point at infinity)"
        case .degenerateSharedSecret:
            return "SPAKE2: peer point cancels the password mask; shared point would be the identity"
        case .reflectedMessage:
            return "SPAKE2: peer message equals our own message (reflection)"
        case .alreadyFinished:
            return "SPAKE2: finish(peerMessage:) was already called; create a new Spake2 instance"
        case .invalidConfirmationLength(let expected, let actual):
            return "SPAKE2: confirmation MAC is \(actual) bytes; expected \(expected)"
        case .confirmationMismatch:
            return "SPAKE2: peer key-confirmation MAC does not verify (wrong PIN or tampered exchange)"
        case .openSSL(let operation, let detail):
            return "SPAKE2: OpenSSL \(operation) failed: \(detail)"
        }
    }
}

// MARK: - Password hashing (MHF)

/// scrypt parameters used to turn a PIN into the password scalar `w` (RFC 9382 §3.2: w = MHF(pw) mod p).
///
/// Choice: scrypt (RFC 7914) via OpenSSL's `EVP_PBE_scrypt`, because it is memory-hard (PBKDF2 is
/// not). Default N = 2^15, r = 8, p = 1 → 32 MiB and roughly 0.05–0.2 s per derivation on a desktop
/// CPU. The output is 40 bytes (256 + 64 bits, as RFC 9382 §3.2 suggests), reduced mod the P-256
/// group order. The salt is a fixed domain-separation label followed by both identities in the
/// same length-prefixed form as TT, so the same PIN gives different `w` for different pairs of peers.
///
/// Note for PIN pairing: SPAKE2 already stops an eavesdropper from testing PINs offline, and an
/// active attacker gets one guess per session. The MHF only helps if `w` itself leaks (for example
/// from a memory dump). Limit failed attempts and make PINs single-use at the application level.
public struct ScryptParameters: Sendable, Equatable {
    public var n: UInt64
    public var r: UInt64
    public var p: UInt64

    public init(n: UInt64, r: UInt64, p: UInt64) {
        self.n = n
        self.r = r
        self.p = p
    }

    /// N = 2^15, r = 8, p = 1 (32 MiB).
    public static let pairingDefault = ScryptParameters(n: 1 << 15, r: 8, p: 1)

    /// Exactly the memory OpenSSL's scrypt needs for these parameters (passed as `maxmem`).
    var requiredMemory: UInt64 { 128 * r * p + 128 * r * (n + 2) }
}

// MARK: - SPAKE2

/// One side of a SPAKE2 exchange (RFC 9382, P256-SHA256-HKDF-HMAC).
///
/// Usage:
/// ```swift
/// let me = try Spake2(role: .a, password: Array("123456".utf8),
///                     identityA: Array("host".utf8), identityB: Array("pad".utf8))
/// send(me.outboundMessage())
/// let keys = try me.finish(peerMessage: receive())
/// send(keys.confirmationMAC)
/// try keys.verifyPeerConfirmation(receive())   // throws .confirmationMismatch on a wrong PIN
/// use(keys.ke)
/// ```
/// An instance is single-use and not thread-safe; use it from one task at a time.
public final class Spake2 {
    public enum Role: Sendable, Equatable {
        /// The party that sends pA = x*P + w*M.
        case a
        /// The party that sends pB = y*P + w*N.
        case b
    }

    /// Length of `outboundMessage()` and of the expected peer message (uncompressed SEC1 P-256 point).
    public static let messageLength = 65
    /// Length of a key-confirmation MAC (HMAC-SHA256).
    public static let confirmationLength = 32
    /// Length of a P-256 scalar (w, x, y) in bytes.
    public static let scalarLength = 32

    /// RFC 9382 §6, P-256 M (SEC1 compressed). Seed: "1.2.840.10045.3.1.7 point generation seed (M)".
    static let mCompressed: [UInt8] = hexBytes("02886e2f97ace46e55ba9dd7242579f2993b64e16ef3dcab95afd497333d8fa12f")
    /// RFC 9382 §6, P-256 N (SEC1 compressed). Seed: "1.2.840.10045.3.1.7 point generation seed (N)".
    static let nCompressed: [UInt8] = hexBytes("03d8bbd6c639c62937b04d997f38c3770719c629d7014d49a24b4f98baa1292b49")

    public let role: Role
    private let identityA: [UInt8]
    private let identityB: [UInt8]
    private let aad: [UInt8]
    private let curve: P256
    private let bnContext: BNContext
    private let w: BigNum
    private let ephemeral: BigNum  // x (role a) or y (role b)
    private let message: [UInt8]
    private var finished = false

    /// Production initializer: derives `w` from the password/PIN with scrypt (see `ScryptParameters`),
    /// picks a fresh random ephemeral scalar, and computes this side's message.
    ///
    /// - Parameters:
    ///   - password: the PIN bytes (normalise text before calling, e.g. ASCII digits).
    ///   - identityA, identityB: identities of parties A and B; both sides must pass the same values.
    ///     Empty identities are allowed, but RFC 9382 says to use them only when identities are implicit.
    ///   - aad: additional authenticated data mixed into the confirmation keys (RFC 9382 §4).
    public convenience init(
        role: Role,
        password: [UInt8],
        identityA: [UInt8],
        identityB: [UInt8],
        aad: [UInt8] = [],
        scrypt: ScryptParameters = .pairingDefault
    ) throws {
        let w = try Spake2.passwordScalar(password: password, identityA: identityA,
                                          identityB: identityB, parameters: scrypt)
        try self.init(role: role, passwordScalar: w, identityA: identityA, identityB: identityB,
                      aad: aad, ephemeralScalar: nil)
    }

    /// Initializer for a precomputed password scalar `w` (32-byte big-endian, in [1, p)), e.g. from
    /// `Spake2.passwordScalar(...)` computed once off the hot path.
    public convenience init(
        role: Role,
        passwordScalar w: [UInt8],
        identityA: [UInt8],
        identityB: [UInt8],
        aad: [UInt8] = []
    ) throws {
        try self.init(role: role, passwordScalar: w, identityA: identityA, identityB: identityB,
                      aad: aad, ephemeralScalar: nil)
    }

    /// TEST-ONLY hook: fixed `w` and fixed ephemeral scalar (x for role a, y for role b), so that
    /// RFC 9382 Appendix B can be reproduced. Never use a fixed ephemeral scalar in production.
    internal convenience init(
        testingRole role: Role,
        w: [UInt8],
        fixedScalar: [UInt8],
        identityA: [UInt8],
        identityB: [UInt8],
        aad: [UInt8] = []
    ) throws {
        try self.init(role: role, passwordScalar: w, identityA: identityA, identityB: identityB,
                      aad: aad, ephemeralScalar: fixedScalar)
    }

    private init(
        role: Role,
        passwordScalar wBytes: [UInt8],
        identityA: [UInt8],
        identityB: [UInt8],
        aad: [UInt8],
        ephemeralScalar: [UInt8]?
    ) throws {
        self.role = role
        self.identityA = identityA
        self.identityB = identityB
        self.aad = aad
        let curve = try P256()
        let ctx = try BNContext()
        self.curve = curve
        self.bnContext = ctx

        self.w = try curve.scalar(fromBytes: wBytes, name: "w")
        if let fixed = ephemeralScalar {
            self.ephemeral = try curve.scalar(fromBytes: fixed, name: role == .a ? "x" : "y")
        } else {
            self.ephemeral = try curve.randomScalar()
        }

        // pA = x*P + w*M  (role a)   /   pB = y*P + w*N  (role b)
        let mask = role == .a ? curve.m : curve.n
        let ephemeralPublic = try curve.mulGenerator(ephemeral, ctx)
        let maskTimesW = try curve.mul(mask, by: w, ctx)
        let share = try curve.add(ephemeralPublic, maskTimesW, ctx)
        self.message = try curve.encodeUncompressed(share, ctx)
    }

    /// This side's protocol message: pA (role a) or pB (role b), SEC1 uncompressed, 65 bytes.
    public func outboundMessage() -> [UInt8] {
        message
    }

    /// Processes the peer's message and derives the keys. One-shot: a second call throws
    /// `.alreadyFinished`, even if the first call failed.
    ///
    /// Throws a `Spake2Error` if the peer message is malformed, not on the curve, the identity,
    /// cancels the password mask, or is our own message reflected back.
    public func finish(peerMessage: [UInt8]) throws -> Spake2Keys {
        guard !finished else { throw Spake2Error.alreadyFinished }
        finished = true

        let ctx = bnContext
        let peerPoint = try curve.decodePeerPoint(peerMessage, ctx)
        guard peerMessage != message else { throw Spake2Error.reflectedMessage }

        // A: K = h*x*(pB - w*N)     B: K = h*y*(pA - w*M)     (h = 1)
        let peerMask = role == .a ? curve.n : curve.m
        let peerMaskTimesW = try curve.mul(peerMask, by: w, ctx)
        let unmasked = try curve.subtract(peerPoint, peerMaskTimesW, ctx)
        guard !curve.isIdentity(unmasked) else { throw Spake2Error.degenerateSharedSecret }
        let k = try curve.mul(unmasked, by: ephemeral, ctx)
        guard !curve.isIdentity(k) else { throw Spake2Error.degenerateSharedSecret }
        let kBytes = try curve.encodeUncompressed(k, ctx)

        let (pA, pB) = role == .a ? (message, peerMessage) : (peerMessage, message)
        let wBytes = try w.bytes(paddedTo: Spake2.scalarLength)
        let tt = Spake2.transcript(identityA: identityA, identityB: identityB,
                                   pA: pA, pB: pB, k: kBytes, w: wBytes)
        return try Spake2Keys(role: role, transcript: tt, sharedPoint: kBytes, aad: aad)
    }

    // MARK: Transcript and password scalar

    /// TT = len(A)||A || len(B)||B || len(pA)||pA || len(pB)||pB || len(K)||K || len(w)||w
    static func transcript(identityA: [UInt8], identityB: [UInt8], pA: [UInt8], pB: [UInt8],
                           k: [UInt8], w: [UInt8]) -> [UInt8] {
        var tt: [UInt8] = []
        for field in [identityA, identityB, pA, pB, k, w] {
            appendLengthPrefixed(field, to: &tt)
        }
        return tt
    }

    /// Appends len(field) as an 8-byte little-endian integer, then the field.
    static func appendLengthPrefixed(_ field: [UInt8], to out: inout [UInt8]) {
        withUnsafeBytes(of: UInt64(field.count).littleEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: field)
    }

    /// Domain-separation label at the start of the scrypt salt.
    static let scryptSaltLabel = Array("SPAKE2-P256-SHA256-HKDF-HMAC PIN->w scrypt v1".utf8)

    /// w = scrypt(password, salt = label || len(A)||A || len(B)||B, 40 bytes) mod p,
    /// returned as a 32-byte big-endian scalar. Deterministic: both sides get the same w.
    public static func passwordScalar(
        password: [UInt8],
        identityA: [UInt8],
        identityB: [UInt8],
        parameters: ScryptParameters = .pairingDefault
    ) throws -> [UInt8] {
        guard !password.isEmpty else { throw Spake2Error.emptyPassword }
        var salt = scryptSaltLabel
        appendLengthPrefixed(identityA, to: &salt)
        appendLengthPrefixed(identityB, to: &salt)

        let outputLength = scalarLength + 8  // 64 extra bits so the reduction mod p is unbiased
        var output = [UInt8](repeating: 0, count: outputLength)
        let ok = password.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                pw.baseAddress!.withMemoryRebound(to: CChar.self, capacity: pw.count) { pwChars in
                    EVP_PBE_scrypt(pwChars, pw.count, s.baseAddress, s.count,
                                   parameters.n, parameters.r, parameters.p,
                                   parameters.requiredMemory, &output, outputLength)
                }
            }
        }
        defer { output.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        guard ok == 1 else { throw openSSLError("EVP_PBE_scrypt") }

        let curve = try P256()
        let ctx = try BNContext()
        let wide = try BigNum(bytes: output)
        let reduced = try BigNum()
        guard BN_nnmod(reduced.ptr, wide.ptr, curve.order, ctx.ptr) == 1 else {
            throw openSSLError("BN_nnmod")
        }
        // w = 0 happens with probability ~2^-256; reject it rather than run with no password mask.
        guard BN_is_zero(reduced.ptr) == 0 else {
            throw Spake2Error.invalidScalar("password hashed to w = 0")
        }
        return try reduced.bytes(paddedTo: scalarLength)
    }
}

// MARK: - Keys and key confirmation

/// Keys from a finished SPAKE2 exchange (RFC 9382 §4), plus key confirmation.
///
/// Ke is the session key. It MUST NOT be used until `verifyPeerConfirmation(_:)` has succeeded.
public struct Spake2Keys: Sendable {
    /// Which side derived these keys (decides which MAC is "ours").
    public let role: Spake2.Role
    /// Shared session key Ke (first half of Hash(TT)), 16 bytes.
    public let ke: [UInt8]
    /// Ka (second half of Hash(TT)), 16 bytes; used only to derive KcA/KcB.
    public let ka: [UInt8]
    /// A's confirmation key, 16 bytes.
    public let kcA: [UInt8]
    /// B's confirmation key, 16 bytes.
    public let kcB: [UInt8]
    /// MAC A = HMAC-SHA256(KcA, TT): the confirmation message A sends.
    public let macA: [UInt8]
    /// MAC B = HMAC-SHA256(KcB, TT): the confirmation message B sends.
    public let macB: [UInt8]

    /// The transcript TT (secret: it contains K and w). Internal so tests can check it.
    let transcript: [UInt8]
    /// Hash(TT) = Ke || Ka.
    let transcriptHash: [UInt8]
    /// The shared group element K (secret; RFC 9382 says never to use it directly).
    let sharedPoint: [UInt8]

    init(role: Spake2.Role, transcript tt: [UInt8], sharedPoint: [UInt8], aad: [UInt8]) throws {
        self.role = role
        self.transcript = tt
        self.sharedPoint = sharedPoint
        let hash = try Crypto.sha256(tt)
        self.transcriptHash = hash
        self.ke = Array(hash[0..<16])
        self.ka = Array(hash[16..<32])
        let kc = try Crypto.hkdfSHA256(ikm: ka, info: Array("ConfirmationKeys".utf8) + aad, length: 32)
        self.kcA = Array(kc[0..<16])
        self.kcB = Array(kc[16..<32])
        self.macA = try Crypto.hmacSHA256(key: kcA, message: tt)
        self.macB = try Crypto.hmacSHA256(key: kcB, message: tt)
    }

    /// The confirmation MAC this side sends (MAC A for role a, MAC B for role b).
    public var confirmationMAC: [UInt8] { role == .a ? macA : macB }

    /// The MAC for the given role's confirmation message.
    public func confirmationMAC(for sender: Spake2.Role) -> [UInt8] { sender == .a ? macA : macB }

    /// Checks the peer's confirmation MAC in constant time. Returns normally only if it verifies.
    public func verifyPeerConfirmation(_ mac: [UInt8]) throws {
        let expected = role == .a ? macB : macA
        guard mac.count == expected.count else {
            throw Spake2Error.invalidConfirmationLength(expected: expected.count, actual: mac.count)
        }
        guard Crypto.constantTimeEqual(mac, expected) else { throw Spake2Error.confirmationMismatch }
    }

    /// Non-throwing form of `verifyPeerConfirmation(_:)`.
    public func isValidPeerConfirmation(_ mac: [UInt8]) -> Bool {
        (try? verifyPeerConfirmation(mac)) != nil
    }
}

// MARK: - OpenSSL wrappers (internal)

/// Gathers the OpenSSL error queue into a `Spake2Error.openSSL` (and clears the queue).
func openSSLError(_ operation: String) -> Spake2Error {
    var details: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        details.append(String(nulTerminated: buffer))
    }
    return .openSSL(operation: operation, detail: details.isEmpty ? "no OpenSSL error recorded" : details.joined(separator: "; "))
}

/// Owns a BN_CTX.
final class BNContext {
    let ptr: OpaquePointer
    init() throws {
        guard let p = BN_CTX_new() else { throw openSSLError("BN_CTX_new") }
        ptr = p
    }
    deinit { BN_CTX_free(ptr) }
}

/// Owns a BIGNUM; cleared (zeroed) and freed on deinit.
final class BigNum {
    let ptr: OpaquePointer
    init() throws {
        guard let p = BN_new() else { throw openSSLError("BN_new") }
        ptr = p
    }
    init(bytes: [UInt8]) throws {
        guard let p = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            throw openSSLError("BN_bin2bn")
        }
        ptr = p
    }
    deinit { BN_clear_free(ptr) }

    /// Big-endian, left-padded with zeros to `length` bytes.
    func bytes(paddedTo length: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        guard BN_bn2binpad(ptr, &out, Int32(length)) == Int32(length) else {
            throw openSSLError("BN_bn2binpad")
        }
        return out
    }
}

/// Owns an EC_GROUP.
final class ECGroup {
    let ptr: OpaquePointer
    init(curve nid: Int32) throws {
        guard let p = EC_GROUP_new_by_curve_name(nid) else { throw openSSLError("EC_GROUP_new_by_curve_name") }
        ptr = p
    }
    deinit { EC_GROUP_free(ptr) }
}

/// Owns an EC_POINT; keeps its group alive so the group is always freed after its points.
final class ECPoint {
    let ptr: OpaquePointer
    let group: ECGroup
    init(group: ECGroup) throws {
        guard let p = EC_POINT_new(group.ptr) else { throw openSSLError("EC_POINT_new") }
        ptr = p
        self.group = group
    }
    deinit { EC_POINT_clear_free(ptr) }
}

/// P-256 group, its order and field prime, and the RFC 9382 M and N points.
final class P256 {
    static let coordinateLength = 32

    let group: ECGroup
    /// Group order p (borrowed from the group; not separately owned).
    let order: OpaquePointer
    /// Field prime q.
    let fieldPrime: BigNum
    let m: ECPoint
    let n: ECPoint

    init() throws {
        let group = try ECGroup(curve: NID_X9_62_prime256v1)
        self.group = group
        guard let order = EC_GROUP_get0_order(group.ptr) else { throw openSSLError("EC_GROUP_get0_order") }
        self.order = order
        let ctx = try BNContext()
        let prime = try BigNum()
        guard EC_GROUP_get_curve(group.ptr, prime.ptr, nil, nil, ctx.ptr) == 1 else {
            throw openSSLError("EC_GROUP_get_curve")
        }
        self.fieldPrime = prime
        self.m = try P256.decodeTrusted(Spake2.mCompressed, group: group, ctx)
        self.n = try P256.decodeTrusted(Spake2.nCompressed, group: group, ctx)
    }

    /// Decodes one of the built-in constants (M, N).
    private static func decodeTrusted(_ bytes: [UInt8], group: ECGroup, _ ctx: BNContext) throws -> ECPoint {
        let point = try ECPoint(group: group)
        guard EC_POINT_oct2point(group.ptr, point.ptr, bytes, bytes.count, ctx.ptr) == 1,
              EC_POINT_is_on_curve(group.ptr, point.ptr, ctx.ptr) == 1 else {
            throw openSSLError("EC_POINT_oct2point (M/N constant)")
        }
        return point
    }

    /// Parses a 32-byte big-endian scalar and requires 0 < s < p.
    func scalar(fromBytes bytes: [UInt8], name: String) throws -> BigNum {
        guard bytes.count == Spake2.scalarLength else {
            throw Spake2Error.invalidScalar("\(name) must be \(Spake2.scalarLength) bytes, got \(bytes.count)")
        }
        let s = try BigNum(bytes: bytes)
        BN_set_flags(s.ptr, Int32(BN_FLG_CONSTTIME))
        guard BN_is_zero(s.ptr) == 0, BN_cmp(s.ptr, order) < 0 else {
            throw Spake2Error.invalidScalar("\(name) must be in [1, p) where p is the P-256 group order")
        }
        return s
    }

    /// Uniformly random scalar in [1, p).
    func randomScalar() throws -> BigNum {
        let s = try BigNum()
        BN_set_flags(s.ptr, Int32(BN_FLG_CONSTTIME))
        repeat {
            guard BN_priv_rand_range(s.ptr, order) == 1 else { throw openSSLError("BN_priv_rand_range") }
        } while BN_is_zero(s.ptr) == 1
        return s
    }

    /// k * P (generator).
    func mulGenerator(_ k: BigNum, _ ctx: BNContext) throws -> ECPoint {
        let r = try ECPoint(group: group)
        guard EC_POINT_mul(group.ptr, r.ptr, k.ptr, nil, nil, ctx.ptr) == 1 else {
            throw openSSLError("EC_POINT_mul (generator)")
        }
        return r
    }

    /// k * Q for an arbitrary point Q.
    func mul(_ q: ECPoint, by k: BigNum, _ ctx: BNContext) throws -> ECPoint {
        let r = try ECPoint(group: group)
        guard EC_POINT_mul(group.ptr, r.ptr, nil, q.ptr, k.ptr, ctx.ptr) == 1 else {
            throw openSSLError("EC_POINT_mul")
        }
        return r
    }

    func add(_ a: ECPoint, _ b: ECPoint, _ ctx: BNContext) throws -> ECPoint {
        let r = try ECPoint(group: group)
        guard EC_POINT_add(group.ptr, r.ptr, a.ptr, b.ptr, ctx.ptr) == 1 else {
            throw openSSLError("EC_POINT_add")
        }
        return r
    }

    /// a - b
    func subtract(_ a: ECPoint, _ b: ECPoint, _ ctx: BNContext) throws -> ECPoint {
        let negB = try ECPoint(group: group)
        guard EC_POINT_copy(negB.ptr, b.ptr) == 1 else { throw openSSLError("EC_POINT_copy") }
        guard EC_POINT_invert(group.ptr, negB.ptr, ctx.ptr) == 1 else { throw openSSLError("EC_POINT_invert") }
        return try add(a, negB, ctx)
    }

    func isIdentity(_ point: ECPoint) -> Bool {
        EC_POINT_is_at_infinity(group.ptr, point.ptr) == 1
    }

    /// SEC1 uncompressed encoding (0x04 || X || Y).
    func encodeUncompressed(_ point: ECPoint, _ ctx: BNContext) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Spake2.messageLength)
        let written = EC_POINT_point2oct(group.ptr, point.ptr, POINT_CONVERSION_UNCOMPRESSED,
                                         &out, out.count, ctx.ptr)
        guard written == Spake2.messageLength else { throw openSSLError("EC_POINT_point2oct") }
        return out
    }

    /// Strictly validates and decodes a peer's message: 65 bytes, 0x04 prefix, both coordinates
    /// < field prime, on the curve, not the identity.
    func decodePeerPoint(_ bytes: [UInt8], _ ctx: BNContext) throws -> ECPoint {
        // SEC1 encodes the identity as the single byte 0x00.
        if bytes == [0x00] { throw Spake2Error.identityPoint }
        guard bytes.count == Spake2.messageLength else {
            throw Spake2Error.invalidMessageLength(expected: Spake2.messageLength, actual: bytes.count)
        }
        guard bytes[0] == 0x04 else { throw Spake2Error.unsupportedPointEncoding(prefix: bytes[0]) }

        let len = P256.coordinateLength
        let x = try BigNum(bytes: Array(bytes[1..<(1 + len)]))
        let y = try BigNum(bytes: Array(bytes[(1 + len)...]))
        guard BN_cmp(x.ptr, fieldPrime.ptr) < 0, BN_cmp(y.ptr, fieldPrime.ptr) < 0 else {
            throw Spake2Error.coordinateOutOfRange
        }

        let point = try ECPoint(group: group)
        // EC_POINT_set_affine_coordinates also rejects points that are not on the curve.
        guard EC_POINT_set_affine_coordinates(group.ptr, point.ptr, x.ptr, y.ptr, ctx.ptr) == 1 else {
            ERR_clear_error()
            throw Spake2Error.pointNotOnCurve
        }
        guard EC_POINT_is_on_curve(group.ptr, point.ptr, ctx.ptr) == 1 else {
            ERR_clear_error()
            throw Spake2Error.pointNotOnCurve
        }
        guard !isIdentity(point) else { throw Spake2Error.identityPoint }
        return point
    }
}

/// SHA-256, HMAC-SHA256, HKDF-SHA256 from OpenSSL.
enum Crypto {
    static func sha256(_ data: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var outLength: UInt32 = 0
        guard EVP_Digest(data, data.count, &out, &outLength, EVP_sha256(), nil) == 1, outLength == 32 else {
            throw openSSLError("EVP_Digest(SHA256)")
        }
        return out
    }

    static func hmacSHA256(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var outLength: UInt32 = 0
        guard HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &out, &outLength) != nil,
              outLength == 32 else {
            throw openSSLError("HMAC(SHA256)")
        }
        return out
    }

    /// HKDF-SHA256 (RFC 5869) with an empty salt (RFC 9382: KDF(Ka, nil, info, L)).
    static func hkdfSHA256(ikm: [UInt8], info: [UInt8], length: Int) throws -> [UInt8] {
        guard let pctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { throw openSSLError("EVP_PKEY_CTX_new_id(HKDF)") }
        defer { EVP_PKEY_CTX_free(pctx) }
        guard EVP_PKEY_derive_init(pctx) == 1 else { throw openSSLError("EVP_PKEY_derive_init") }
        guard EVP_PKEY_CTX_set_hkdf_md(pctx, EVP_sha256()) == 1 else { throw openSSLError("EVP_PKEY_CTX_set_hkdf_md") }
        guard EVP_PKEY_CTX_set1_hkdf_key(pctx, ikm, Int32(ikm.count)) == 1 else {
            throw openSSLError("EVP_PKEY_CTX_set1_hkdf_key")
        }
        guard EVP_PKEY_CTX_add1_hkdf_info(pctx, info, Int32(info.count)) == 1 else {
            throw openSSLError("EVP_PKEY_CTX_add1_hkdf_info")
        }
        var out = [UInt8](repeating: 0, count: length)
        var outLength = length
        guard EVP_PKEY_derive(pctx, &out, &outLength) == 1, outLength == length else {
            throw openSSLError("EVP_PKEY_derive(HKDF)")
        }
        return out
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return CRYPTO_memcmp(a, b, a.count) == 0
    }
}

/// Hex string → bytes (for the built-in constants).
func hexBytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var chars = hex.makeIterator()
    while let hi = chars.next(), let lo = chars.next() {
        out.append(UInt8(String([hi, lo]), radix: 16)!)
    }
    return out
}
