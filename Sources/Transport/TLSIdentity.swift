import COpenSSL
import Foundation
import PadSystem

/// A self-signed Ed25519 identity kept in a state directory: the host's, so clients can pin it,
/// and each client's, so a host can remember the clients it paired with.
///
/// Sendable: immutable after init; OpenSSL's key and certificate objects are only read from then
/// on (by the handshakes and pairings of any thread), which OpenSSL allows concurrently.
public final class TLSIdentity: @unchecked Sendable {
    let key: OpaquePointer          // EVP_PKEY
    let certificate: OpaquePointer  // X509
    /// SHA-256 of the certificate (DER), as lowercase hex pairs joined by ':'.
    public let fingerprint: String

    /// Loads `key.pem`/`cert.pem` from `directory`, creating them on first use.
    public init(directory: URL, commonName: String) throws {
        let keyURL = directory.appendingPathComponent("key.pem"), certURL = directory.appendingPathComponent("cert.pem")
        try PrivateFiles.prepare(directory: directory)
        if FileManager.default.fileExists(atPath: keyURL.path), FileManager.default.fileExists(atPath: certURL.path) {
            for url in [keyURL, certURL] { PrivateFiles.narrow(url, to: PrivateFiles.fileMode) }
            key = try Self.read(keyURL) { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
            certificate = try Self.read(certURL) { PEM_read_bio_X509($0, nil, nil, nil) }
        } else {
            guard let generated = padgate_generate_ed25519() else { throw TLSError.openssl("generating an Ed25519 key") }
            key = generated
            certificate = try Self.selfSigned(key: generated, commonName: commonName)
            try Self.write(keyURL) { PEM_write_bio_PrivateKey($0, generated, nil, nil, 0, nil, nil) }
            try Self.write(certURL) { [certificate] in PEM_write_bio_X509($0, certificate) }
        }
        fingerprint = try Self.fingerprint(of: certificate)
    }

    deinit {
        EVP_PKEY_free(key)
        X509_free(certificate)
    }

    /// Whether `text` is a fingerprint as `fingerprint` prints one: 32 hex pairs joined by colons.
    public static func isFingerprint(_ text: String) -> Bool {
        let pairs = text.split(separator: ":", omittingEmptySubsequences: false)
        return pairs.count == 32 && pairs.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    static func fingerprint(of certificate: OpaquePointer) throws -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else { throw TLSError.openssl("hashing a certificate") }
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined(separator: ":")
    }

    static func selfSigned(key: OpaquePointer, commonName: String) throws -> OpaquePointer {
        guard let x509 = X509_new() else { throw TLSError.openssl("X509_new") }
        var serial = [UInt8](repeating: 0, count: 8)
        RAND_bytes(&serial, 8)
        X509_set_version(x509, 2)
        ASN1_INTEGER_set(X509_get_serialNumber(x509), Int(serial.withUnsafeBytes { $0.load(as: UInt32.self) } & 0x7fff_ffff))
        X509_gmtime_adj(X509_getm_notBefore(x509), -3600)
        X509_gmtime_adj(X509_getm_notAfter(x509), 60 * 60 * 24 * 365 * 20)  // pinned, not trusted by expiry
        X509_set_pubkey(x509, key)
        let name = X509_get_subject_name(x509)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0)
        X509_set_issuer_name(x509, name)
        guard X509_sign(x509, key, nil) > 0 else { X509_free(x509); throw TLSError.openssl("signing the certificate") }
        return x509
    }

    static func read(_ url: URL, _ parse: (OpaquePointer) -> OpaquePointer?) throws -> OpaquePointer {
        guard let bio = BIO_new_file(url.path, "r") else { throw TLSError.identity("cannot read \(url.path)") }
        defer { BIO_free(bio) }
        guard let value = parse(bio) else { throw TLSError.identity("\(url.path) is not a PEM file padgate wrote; delete it to make a new identity") }
        return value
    }

    /// Into a file that is 0600 before the first byte goes in.
    static func write(_ url: URL, _ emit: (OpaquePointer) -> Int32) throws {
        try PrivateFiles.createEmpty(url)
        guard let bio = BIO_new_file(url.path, "w") else { throw TLSError.identity("cannot write \(url.path)") }
        defer { BIO_free(bio) }
        guard emit(bio) == 1 else { throw TLSError.openssl("writing \(url.path)") }
    }
}

public enum TLSError: Error, Equatable, CustomStringConvertible {
    case openssl(String)
    case identity(String)
    case handshake(String)
    case closed
    case fingerprintChanged(host: String, expected: String, got: String)
    case notPaired(fingerprint: String)
    case io(String)
    /// A step (named) did not finish by its deadline.
    case timedOut(String)
    /// The client's TLS handshake with the host (named) did not finish by its deadline: a host
    /// frozen or overloaded, not padgate, or a lossy link's retransmissions.
    case handshakeTimedOut(String)
    /// The host turned the client away; the reason is the host's text, made safe to print.
    case refused(String)
    /// Nothing authentic came from the host for this long: it is treated as gone.
    case hostSilent(Duration)
    /// A signal asked the process to stop while it waited for the peer.
    case interrupted
    /// The network said the host cannot be reached (its address or neighbour probes went
    /// unanswered) during `step`: worth another try while there is time.
    case unreachable(step: String, Errno)

    public var description: String {
        switch self {
        case .openssl(let what): return "OpenSSL failed while \(what): \(TLSError.queue())"
        case .identity(let what): return what
        case .handshake(let why): return "TLS handshake failed: \(why)"
        case .unreachable(let step, let code): return "\(step) failed: \(code)"
        case .closed: return "the connection was closed"
        case .interrupted: return "stopped by a signal while waiting for the peer"
        case .fingerprintChanged(let rawHost, let expected, let got):
            let host = PeerName.escaped(rawHost)  // an announced name is a stranger's bytes
            return """
                the identity of \(host) has changed: expected \(expected), got \(got). \
                Someone may be intercepting the connection, or the host's state directory was reset. \
                If you trust the change: padgate hosts forget \(host), then pair again.
                """
        case .notPaired(let fingerprint):
            return "this host accepts only paired clients, and \(fingerprint) is not one: run 'padgate pair HOST' with the PIN 'padgate serve --pair' shows"
        case .io(let what): return what
        case .timedOut(let step): return "\(step) did not finish within its deadline"
        case .handshakeTimedOut(let host): return "the TLS handshake with \(host) (is 'padgate serve' running there, and not overloaded?) did not finish within its deadline"
        case .refused(let reason): return "the host refused the connection: \(displayable(peerText: reason))"
        case .hostSilent(let silence): return "the host stopped answering (nothing for \(silence)); feedback on the pads stopped"
        }
    }

    static let noDetail = "no detail"

    static func queue() -> String {
        var lines: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            lines.append(String(nulTerminated: buffer))
        }
        return lines.isEmpty ? noDetail : lines.joined(separator: "; ")
    }
}
