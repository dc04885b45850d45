// Tests for Sources/Transport/Spake2.swift (SPAKE2, RFC 9382, P256-SHA256-HKDF-HMAC).

import XCTest
@testable import Transport

// MARK: - RFC 9382 Appendix B test vectors

/// One RFC 9382 Appendix B vector. Hex copied from the RFC's appendix. The RFC calls the shares
/// pA/pB ("X"/"Y" elsewhere), and "A conf"/"B conf" are MAC A/MAC B.
struct RFCVector {
    let identityA: String
    let identityB: String
    let w: String
    let x: String
    let pA: String
    let y: String
    let pB: String
    let k: String
    let tt: String
    let hashTT: String
    let ke: String
    let ka: String
    let kcA: String
    let kcB: String
    let macA: String
    let macB: String
}

let rfc9382Vectors: [RFCVector] = [
        RFCVector(
            identityA: "server", identityB: "client",
            w: "2ee57912099d31560b3a44b1184b9b4866e904c49d12ac5042c97dca461b1a5f",
            x: "43dd0fd7215bdcb482879fca3220c6a968e66d70b1356cac18bb26c84a78d729",
            pA: "04a56fa807caaa53a4d28dbb9853b9815c61a411118a6fe516a8798434751470f9010153ac33d0d5f2047ffdb1a3e42c9b4e6be662766e1eeb4116988ede5f912c",
            y: "dcb60106f276b02606d8ef0a328c02e4b629f84f89786af5befb0bc75b6e66be",
            pB: "0406557e482bd03097ad0cbaa5df82115460d951e3451962f1eaf4367a420676d09857ccbc522686c83d1852abfa8ed6e4a1155cf8f1543ceca528afb591a1e0b7",
            k: "0412af7e89717850671913e6b469ace67bd90a4df8ce45c2af19010175e37eed69f75897996d539356e2fa6a406d528501f907e04d97515fbe83db277b715d3325",
            tt: "06000000000000007365727665720600000000000000636c69656e74410000000000000004a56fa807caaa53a4d28dbb9853b9815c61a411118a6fe516a8798434751470f9010153ac33d0d5f2047ffdb1a3e42c9b4e6be662766e1eeb4116988ede5f912c41000000000000000406557e482bd03097ad0cbaa5df82115460d951e3451962f1eaf4367a420676d09857ccbc522686c83d1852abfa8ed6e4a1155cf8f1543ceca528afb591a1e0b741000000000000000412af7e89717850671913e6b469ace67bd90a4df8ce45c2af19010175e37eed69f75897996d539356e2fa6a406d528501f907e04d97515fbe83db277b715d332520000000000000002ee57912099d31560b3a44b1184b9b4866e904c49d12ac5042c97dca461b1a5f",
            hashTT: "0e0672dc86f8e45565d338b0540abe6915bdf72e2b35b5c9e5663168e960a91b",
            ke: "0e0672dc86f8e45565d338b0540abe69",
            ka: "15bdf72e2b35b5c9e5663168e960a91b",
            kcA: "00c12546835755c86d8c0db7851ae86f",
            kcB: "a9fa3406c3b781b93d804485430ca27a",
            macA: "58ad4aa88e0b60d5061eb6b5dd93e80d9c4f00d127c65b3b35b1b5281fee38f0",
            macB: "d3e2e547f1ae04f2dbdbf0fc4b79f8ecff2dff314b5d32fe9fcef2fb26dc459b"
        ),
        RFCVector(
            identityA: "", identityB: "client",
            w: "0548d8729f730589e579b0475a582c1608138ddf7054b73b5381c7e883e2efae",
            x: "403abbe3b1b4b9ba17e3032849759d723939a27a27b9d921c500edde18ed654b",
            pA: "04a897b769e681c62ac1c2357319a3d363f610839c4477720d24cbe32f5fd85f44fb92ba966578c1b712be6962498834078262caa5b441ecfa9d4a9485720e918a",
            y: "903023b6598908936ea7c929bd761af6039577a9c3f9581064187c3049d87065",
            pB: "04e0f816fd1c35e22065d5556215c097e799390d16661c386e0ecc84593974a61b881a8c82327687d0501862970c64565560cb5671f696048050ca66ca5f8cc7fc",
            k: "048f83ec9f6e4f87cc6f9dc740bdc2769725f923364f01c84148c049a39a735ebda82eac03e00112fd6a5710682767cff5361f7e819e53d8d3c3a2922e0d837aa6",
            tt: "00000000000000000600000000000000636c69656e74410000000000000004a897b769e681c62ac1c2357319a3d363f610839c4477720d24cbe32f5fd85f44fb92ba966578c1b712be6962498834078262caa5b441ecfa9d4a9485720e918a410000000000000004e0f816fd1c35e22065d5556215c097e799390d16661c386e0ecc84593974a61b881a8c82327687d0501862970c64565560cb5671f696048050ca66ca5f8cc7fc4100000000000000048f83ec9f6e4f87cc6f9dc740bdc2769725f923364f01c84148c049a39a735ebda82eac03e00112fd6a5710682767cff5361f7e819e53d8d3c3a2922e0d837aa620000000000000000548d8729f730589e579b0475a582c1608138ddf7054b73b5381c7e883e2efae",
            hashTT: "642f05c473c2cd79909f9a841e2f30a70bf89b18180af97353ba198789c2b963",
            ke: "642f05c473c2cd79909f9a841e2f30a7",
            ka: "0bf89b18180af97353ba198789c2b963",
            kcA: "c6be376fc7cd1301fd0a13adf3e7bffd",
            kcB: "b7243f4ae60440a49b3f8cab3c1fba07",
            macA: "47d29e6666af1b7dd450d571233085d7a9866e4d49d2645e2df975489521232b",
            macB: "3313c5cefc361d27fb16847a91c2a73b766ffa90a4839122a9b70a2f6bd1d6df"
        ),
        RFCVector(
            identityA: "server", identityB: "",
            w: "626e0cdc7b14c9db3e52a0b1b3a768c98e37852d5db30febe0497b14eae8c254",
            x: "07adb3db6bc623d3399726bfdbfd3d15a58ea776ab8a308b00392621291f9633",
            pA: "04f88fb71c99bfffaea370966b7eb99cd4be0ff1a7d335caac4211c4afd855e2e15a873b298503ad8ba1d9cbb9a392d2ba309b48bfd7879aefd0f2cea6009763b0",
            y: "b6a4fc8dbb629d4ba51d6f91ed1532cf87adec98f25dd153a75accafafedec16",
            pB: "040c269d6be017dccb15182ac6bfcd9e2a14de019dd587eaf4bdfd353f031101e7cca177f8eb362a6e83e7d5e729c0732e1b528879c086f39ba0f31a9661bd34db",
            k: "0445ee233b8ecb51ebd6e7da3f307e88a1616bae2166121221fdc0dadb986afaf3ec8a988dc9c626fa3b99f58a7ca7c9b844bb3e8dd9554aafc5b53813504c1cbe",
            tt: "06000000000000007365727665720000000000000000410000000000000004f88fb71c99bfffaea370966b7eb99cd4be0ff1a7d335caac4211c4afd855e2e15a873b298503ad8ba1d9cbb9a392d2ba309b48bfd7879aefd0f2cea6009763b04100000000000000040c269d6be017dccb15182ac6bfcd9e2a14de019dd587eaf4bdfd353f031101e7cca177f8eb362a6e83e7d5e729c0732e1b528879c086f39ba0f31a9661bd34db41000000000000000445ee233b8ecb51ebd6e7da3f307e88a1616bae2166121221fdc0dadb986afaf3ec8a988dc9c626fa3b99f58a7ca7c9b844bb3e8dd9554aafc5b53813504c1cbe2000000000000000626e0cdc7b14c9db3e52a0b1b3a768c98e37852d5db30febe0497b14eae8c254",
            hashTT: "005184ff460da2ce59062c87733c299c3521297d736598fc0a1127600efa1afb",
            ke: "005184ff460da2ce59062c87733c299c",
            ka: "3521297d736598fc0a1127600efa1afb",
            kcA: "f3da53604f0aeecea5a33be7bddf6edf",
            kcB: "9e3f86848736f159bd92b6e107ec6799",
            macA: "bc9f9bbe99f26d0b2260e6456e05a86196a3307ec6663a18bf6ac825736533b2",
            macB: "c2370e1bf813b086dff0d834e74425a06e6390f48f5411900276dcccc5a297ec"
        ),
        RFCVector(
            identityA: "", identityB: "",
            w: "7bf46c454b4c1b25799527d896508afd5fc62ef4ec59db1efb49113063d70cca",
            x: "8cef65df64bb2d0f83540c53632de911b5b24b3eab6cc74a97609fd659e95473",
            pA: "04a65b367a3f613cf9f0654b1b28a1e3a8a40387956c8ba6063e8658563890f46ca1ef6a676598889fc28de2950ab8120b79a5ef1ea4c9f44bc98f585634b46d66",
            y: "d7a66f64074a84652d8d623a92e20c9675c61cb5b4f6a0063e4648a2fdc02d53",
            pB: "04589f13218822710d98d8b2123a079041052d9941b9cf88c6617ddb2fcc0494662eea8ba6b64692dc318250030c6af045cb738bc81ba35b043c3dcb46adf6f58d",
            k: "041a3c03d51b452537ca2a1fea6110353c6d5ed483c4f0f86f4492ca3f378d40a994b4477f93c64d928edbbcd3e85a7c709b7ea73ee97986ce3d1438e135543772",
            tt: "00000000000000000000000000000000410000000000000004a65b367a3f613cf9f0654b1b28a1e3a8a40387956c8ba6063e8658563890f46ca1ef6a676598889fc28de2950ab8120b79a5ef1ea4c9f44bc98f585634b46d66410000000000000004589f13218822710d98d8b2123a079041052d9941b9cf88c6617ddb2fcc0494662eea8ba6b64692dc318250030c6af045cb738bc81ba35b043c3dcb46adf6f58d4100000000000000041a3c03d51b452537ca2a1fea6110353c6d5ed483c4f0f86f4492ca3f378d40a994b4477f93c64d928edbbcd3e85a7c709b7ea73ee97986ce3d1438e13554377220000000000000007bf46c454b4c1b25799527d896508afd5fc62ef4ec59db1efb49113063d70cca",
            hashTT: "fc6374762ba5cf11f4b2caa08b2cd1b9907ae0e26e8d6234318d91583cd74c86",
            ke: "fc6374762ba5cf11f4b2caa08b2cd1b9",
            ka: "907ae0e26e8d6234318d91583cd74c86",
            kcA: "5dbd2f477166b7fb6d61febbd77a5563",
            kcB: "7689b4654407a5faeffdc8f18359d8a3",
            macA: "dfb4db8d48ae5a675963ea5e6c19d98d4ea028d8e898dad96ea19a80ade95dca",
            macB: "d0f0609d1613138d354f7e95f19fb556bf52d751947241e8c7118df5ef0ae175"
        ),
]

// MARK: - Helpers

func unhex(_ hex: String) -> [UInt8] {
    precondition(hex.count % 2 == 0, "odd-length hex")
    var out: [UInt8] = []
    var it = hex.makeIterator()
    while let hi = it.next(), let lo = it.next() {
        out.append(UInt8(String([hi, lo]), radix: 16)!)
    }
    return out
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// Fast scrypt settings so the tests do not spend time in the MHF (the default is tested once).
let fastScrypt = ScryptParameters(n: 1 << 10, r: 8, p: 1)

/// Asserts that `body` throws exactly `expected`.
func assertThrows<T>(_ expected: Spake2Error, _ body: @autoclosure () throws -> T,
                     file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try body()
        XCTFail("expected \(expected), but nothing was thrown", file: file, line: line)
    } catch let error as Spake2Error {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
}

final class Spake2Tests: XCTestCase {

    // MARK: RFC vectors

    func testRFC9382AppendixBVectors() throws {
        XCTAssertEqual(rfc9382Vectors.count, 4)
        for v in rfc9382Vectors {
            let label = "A='\(v.identityA)', B='\(v.identityB)'"
            let idA = Array(v.identityA.utf8), idB = Array(v.identityB.utf8)
            let a = try Spake2(testingRole: .a, w: unhex(v.w), fixedScalar: unhex(v.x),
                               identityA: idA, identityB: idB)
            let b = try Spake2(testingRole: .b, w: unhex(v.w), fixedScalar: unhex(v.y),
                               identityA: idA, identityB: idB)

            // X = pA, Y = pB
            XCTAssertEqual(hex(a.outboundMessage()), v.pA, "pA (X) \(label)")
            XCTAssertEqual(hex(b.outboundMessage()), v.pB, "pB (Y) \(label)")

            let keysA = try a.finish(peerMessage: b.outboundMessage())
            let keysB = try b.finish(peerMessage: a.outboundMessage())

            for (side, keys) in [("A", keysA), ("B", keysB)] {
                let at = "\(label), computed by \(side)"
                XCTAssertEqual(hex(keys.sharedPoint), v.k, "K \(at)")
                XCTAssertEqual(hex(keys.transcript), v.tt, "TT \(at)")
                XCTAssertEqual(hex(keys.transcriptHash), v.hashTT, "Hash(TT) \(at)")
                XCTAssertEqual(hex(keys.ke), v.ke, "Ke \(at)")
                XCTAssertEqual(hex(keys.ka), v.ka, "Ka \(at)")
                XCTAssertEqual(hex(keys.kcA), v.kcA, "KcA \(at)")
                XCTAssertEqual(hex(keys.kcB), v.kcB, "KcB \(at)")
                XCTAssertEqual(hex(keys.macA), v.macA, "MAC A (A conf) \(at)")
                XCTAssertEqual(hex(keys.macB), v.macB, "MAC B (B conf) \(at)")
                XCTAssertEqual(hex(keys.confirmationMAC(for: .a)), v.macA, "MAC A \(at)")
                XCTAssertEqual(hex(keys.confirmationMAC(for: .b)), v.macB, "MAC B \(at)")
            }
            XCTAssertEqual(hex(keysA.confirmationMAC), v.macA, "A sends MAC A \(label)")
            XCTAssertEqual(hex(keysB.confirmationMAC), v.macB, "B sends MAC B \(label)")
            XCTAssertNoThrow(try keysA.verifyPeerConfirmation(unhex(v.macB)), label)
            XCTAssertNoThrow(try keysB.verifyPeerConfirmation(unhex(v.macA)), label)
        }
    }

    func testMAndNAreTheRFCPoints() throws {
        XCTAssertEqual(hex(Spake2.mCompressed), "02886e2f97ace46e55ba9dd7242579f2993b64e16ef3dcab95afd497333d8fa12f")
        XCTAssertEqual(hex(Spake2.nCompressed), "03d8bbd6c639c62937b04d997f38c3770719c629d7014d49a24b4f98baa1292b49")
        // P256() decodes and on-curve-checks both.
        XCTAssertNoThrow(try P256())
    }

    func testTranscriptLengthPrefixIsEightByteLittleEndian() {
        var out: [UInt8] = []
        Spake2.appendLengthPrefixed(Array("server".utf8), to: &out)
        XCTAssertEqual(hex(out), "0600000000000000" + hex(Array("server".utf8)))
        out = []
        Spake2.appendLengthPrefixed([UInt8](repeating: 0xab, count: 0x0102), to: &out)
        XCTAssertEqual(hex(Array(out.prefix(8))), "0201000000000000")
    }

    // MARK: Round trips

    func testRoundTripWithDefaultScryptAgreesOnKeys() throws {
        let idA = Array("gamepad-host".utf8), idB = Array("controller-7".utf8)
        let pin = Array("482913".utf8)
        let a = try Spake2(role: .a, password: pin, identityA: idA, identityB: idB)
        let b = try Spake2(role: .b, password: pin, identityA: idA, identityB: idB)
        XCTAssertEqual(a.outboundMessage().count, Spake2.messageLength)
        XCTAssertEqual(a.outboundMessage().first, 0x04)

        let keysA = try a.finish(peerMessage: b.outboundMessage())
        let keysB = try b.finish(peerMessage: a.outboundMessage())
        XCTAssertEqual(keysA.ke, keysB.ke)
        XCTAssertEqual(keysA.ka, keysB.ka)
        XCTAssertEqual(keysA.kcA, keysB.kcA)
        XCTAssertEqual(keysA.kcB, keysB.kcB)
        XCTAssertEqual(keysA.ke.count, 16)
        XCTAssertNotEqual(keysA.macA, keysA.macB)
        XCTAssertNoThrow(try keysA.verifyPeerConfirmation(keysB.confirmationMAC))
        XCTAssertNoThrow(try keysB.verifyPeerConfirmation(keysA.confirmationMAC))
        XCTAssertTrue(keysA.isValidPeerConfirmation(keysB.confirmationMAC))
    }

    func testRoundTripWithAADAndFreshRandomness() throws {
        let idA = Array("host".utf8), idB = Array("pad".utf8), aad = Array("proto=v2,v3".utf8)
        let w = try Spake2.passwordScalar(password: Array("1234".utf8), identityA: idA, identityB: idB,
                                          parameters: fastScrypt)
        let a1 = try Spake2(role: .a, passwordScalar: w, identityA: idA, identityB: idB, aad: aad)
        let b1 = try Spake2(role: .b, passwordScalar: w, identityA: idA, identityB: idB, aad: aad)
        let a2 = try Spake2(role: .a, passwordScalar: w, identityA: idA, identityB: idB, aad: aad)
        // Fresh x per instance → different messages and keys per session.
        XCTAssertNotEqual(a1.outboundMessage(), a2.outboundMessage())
        let kA = try a1.finish(peerMessage: b1.outboundMessage())
        let kB = try b1.finish(peerMessage: a1.outboundMessage())
        XCTAssertEqual(kA.ke, kB.ke)
        XCTAssertNoThrow(try kA.verifyPeerConfirmation(kB.confirmationMAC))
        XCTAssertNoThrow(try kB.verifyPeerConfirmation(kA.confirmationMAC))
    }

    func testLargeAADIsAccepted() throws {
        let w = try Spake2.passwordScalar(password: Array("1".utf8), identityA: [], identityB: [],
                                          parameters: fastScrypt)
        let aad = [UInt8](repeating: 0x5a, count: 8176)  // RFC 9382 maximum: 2^16 - 128 bits = 8176 bytes
        let a = try Spake2(role: .a, passwordScalar: w, identityA: [], identityB: [], aad: aad)
        let b = try Spake2(role: .b, passwordScalar: w, identityA: [], identityB: [], aad: aad)
        let kA = try a.finish(peerMessage: b.outboundMessage())
        let kB = try b.finish(peerMessage: a.outboundMessage())
        XCTAssertNoThrow(try kA.verifyPeerConfirmation(kB.confirmationMAC))
    }

    // MARK: Wrong password / mismatched context

    func testWrongPasswordGivesDifferentKeysAndConfirmationFails() throws {
        let idA = Array("host".utf8), idB = Array("pad".utf8)
        let a = try Spake2(role: .a, password: Array("123456".utf8), identityA: idA, identityB: idB,
                           scrypt: fastScrypt)
        let b = try Spake2(role: .b, password: Array("123457".utf8), identityA: idA, identityB: idB,
                           scrypt: fastScrypt)
        // Both sides still finish: a wrong PIN only shows up at key confirmation.
        let keysA = try a.finish(peerMessage: b.outboundMessage())
        let keysB = try b.finish(peerMessage: a.outboundMessage())
        XCTAssertNotEqual(keysA.ke, keysB.ke)
        XCTAssertNotEqual(keysA.ka, keysB.ka)
        XCTAssertNotEqual(keysA.kcA, keysB.kcA)
        XCTAssertNotEqual(keysA.kcB, keysB.kcB)
        assertThrows(.confirmationMismatch, try keysA.verifyPeerConfirmation(keysB.confirmationMAC))
        assertThrows(.confirmationMismatch, try keysB.verifyPeerConfirmation(keysA.confirmationMAC))
        XCTAssertFalse(keysA.isValidPeerConfirmation(keysB.confirmationMAC))
    }

    func testMismatchedAADOrIdentitiesFailConfirmation() throws {
        let w = try Spake2.passwordScalar(password: Array("0000".utf8), identityA: [], identityB: [],
                                          parameters: fastScrypt)
        // Different AAD: same Ke, but different confirmation keys.
        let a = try Spake2(role: .a, passwordScalar: w, identityA: [], identityB: [], aad: [1])
        let b = try Spake2(role: .b, passwordScalar: w, identityA: [], identityB: [], aad: [2])
        let kA = try a.finish(peerMessage: b.outboundMessage())
        let kB = try b.finish(peerMessage: a.outboundMessage())
        XCTAssertEqual(kA.ke, kB.ke)
        assertThrows(.confirmationMismatch, try kA.verifyPeerConfirmation(kB.confirmationMAC))

        // Different identities: different transcript, so everything differs.
        let a2 = try Spake2(role: .a, passwordScalar: w, identityA: Array("x".utf8), identityB: [])
        let b2 = try Spake2(role: .b, passwordScalar: w, identityA: Array("y".utf8), identityB: [])
        let kA2 = try a2.finish(peerMessage: b2.outboundMessage())
        let kB2 = try b2.finish(peerMessage: a2.outboundMessage())
        XCTAssertNotEqual(kA2.ke, kB2.ke)
        assertThrows(.confirmationMismatch, try kB2.verifyPeerConfirmation(kA2.confirmationMAC))
    }

    func testConfirmationWithWrongLengthOrOwnMACIsRejected() throws {
        let v = rfc9382Vectors[0]
        let a = try Spake2(testingRole: .a, w: unhex(v.w), fixedScalar: unhex(v.x),
                           identityA: Array(v.identityA.utf8), identityB: Array(v.identityB.utf8))
        let keys = try a.finish(peerMessage: unhex(v.pB))
        assertThrows(.invalidConfirmationLength(expected: 32, actual: 31),
                     try keys.verifyPeerConfirmation(Array(unhex(v.macB).prefix(31))))
        assertThrows(.invalidConfirmationLength(expected: 32, actual: 0), try keys.verifyPeerConfirmation([]))
        // A's own MAC reflected back must not verify as B's.
        assertThrows(.confirmationMismatch, try keys.verifyPeerConfirmation(keys.confirmationMAC))
        var flipped = unhex(v.macB)
        flipped[31] ^= 0x01
        assertThrows(.confirmationMismatch, try keys.verifyPeerConfirmation(flipped))
    }

    // MARK: Malformed / invalid peer messages

    /// A fresh side-A instance (instances are one-shot) with the first RFC vector's w and x.
    private func freshA() throws -> Spake2 {
        let v = rfc9382Vectors[0]
        return try Spake2(testingRole: .a, w: unhex(v.w), fixedScalar: unhex(v.x),
                          identityA: Array(v.identityA.utf8), identityB: Array(v.identityB.utf8))
    }

    func testMalformedMessagesAreRejected() throws {
        let validPB = unhex(rfc9382Vectors[0].pB)

        assertThrows(.invalidMessageLength(expected: 65, actual: 0), try freshA().finish(peerMessage: []))
        assertThrows(.invalidMessageLength(expected: 65, actual: 64),
                     try freshA().finish(peerMessage: Array(validPB.prefix(64))))
        assertThrows(.invalidMessageLength(expected: 65, actual: 66),
                     try freshA().finish(peerMessage: validPB + [0]))
        // A valid compressed point (N itself, 33 bytes) is refused by length...
        assertThrows(.invalidMessageLength(expected: 65, actual: 33),
                     try freshA().finish(peerMessage: Spake2.nCompressed))
        // ...and a 65-byte message with a compressed/hybrid/garbage prefix by its prefix.
        for prefix: UInt8 in [0x00, 0x02, 0x03, 0x06, 0x07, 0xff] {
            var bad = validPB
            bad[0] = prefix
            assertThrows(.unsupportedPointEncoding(prefix: prefix), try freshA().finish(peerMessage: bad))
        }
    }

    func testOffCurvePointsAreRejected() throws {
        var offCurve = unhex(rfc9382Vectors[0].pB)
        offCurve[64] ^= 0x01  // change y
        assertThrows(.pointNotOnCurve, try freshA().finish(peerMessage: offCurve))

        // (0, 0) and (1, 1) are not on P-256.
        assertThrows(.pointNotOnCurve, try freshA().finish(peerMessage: [0x04] + [UInt8](repeating: 0, count: 64)))
        var ones = [UInt8](repeating: 0, count: 65)
        ones[0] = 0x04; ones[32] = 1; ones[64] = 1
        assertThrows(.pointNotOnCurve, try freshA().finish(peerMessage: ones))

        // Coordinates >= the field prime.
        assertThrows(.coordinateOutOfRange, try freshA().finish(peerMessage: [0x04] + [UInt8](repeating: 0xff, count: 64)))
        // x = q exactly (q = field prime), y = valid.
        let q = unhex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
        let valid = unhex(rfc9382Vectors[0].pB)
        assertThrows(.coordinateOutOfRange, try freshA().finish(peerMessage: [0x04] + q + Array(valid[33...])))
    }

    func testIdentityIsRejected() throws {
        // SEC1 encoding of the point at infinity.
        assertThrows(.identityPoint, try freshA().finish(peerMessage: [0x00]))
    }

    func testPeerMessageCancellingThePasswordMaskIsRejected() throws {
        // A peer that sends exactly w*N makes pB - w*N the identity, so K would be the identity.
        let v = rfc9382Vectors[0]
        let curve = try P256()
        let ctx = try BNContext()
        let w = try curve.scalar(fromBytes: unhex(v.w), name: "w")
        let wN = try curve.encodeUncompressed(try curve.mul(curve.n, by: w, ctx), ctx)
        assertThrows(.degenerateSharedSecret, try freshA().finish(peerMessage: wN))

        // Same for B receiving w*M.
        let b = try Spake2(testingRole: .b, w: unhex(v.w), fixedScalar: unhex(v.y),
                           identityA: Array(v.identityA.utf8), identityB: Array(v.identityB.utf8))
        let wM = try curve.encodeUncompressed(try curve.mul(curve.m, by: w, ctx), ctx)
        assertThrows(.degenerateSharedSecret, try b.finish(peerMessage: wM))
    }

    func testReflectedMessageIsRejected() throws {
        let a = try freshA()
        assertThrows(.reflectedMessage, try a.finish(peerMessage: a.outboundMessage()))
    }

    func testFinishIsOneShotEvenAfterAFailure() throws {
        let v = rfc9382Vectors[0]
        let a = try freshA()
        assertThrows(.invalidMessageLength(expected: 65, actual: 1), try a.finish(peerMessage: [0x04]))
        assertThrows(.alreadyFinished, try a.finish(peerMessage: unhex(v.pB)))

        let a2 = try freshA()
        _ = try a2.finish(peerMessage: unhex(v.pB))
        assertThrows(.alreadyFinished, try a2.finish(peerMessage: unhex(v.pB)))
    }

    func testErrorsDescribeTheProblem() {
        XCTAssertTrue(Spake2Error.pointNotOnCurve.description.contains("not on the P-256 curve"))
        XCTAssertTrue(Spake2Error.identityPoint.description.contains("identity"))
        XCTAssertTrue(Spake2Error.unsupportedPointEncoding(prefix: 2).description.contains("0x2"))
        XCTAssertTrue(Spake2Error.invalidMessageLength(expected: 65, actual: 3).description.contains("3 bytes"))
    }

    // MARK: Scalars and password hashing

    func testInvalidScalarsAreRejected() {
        let order = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"
        let one = String(repeating: "0", count: 62) + "01"
        let zero = String(repeating: "0", count: 64)
        func make(w: String, x: String) throws -> Spake2 {
            try Spake2(testingRole: .a, w: unhex(w), fixedScalar: unhex(x), identityA: [], identityB: [])
        }
        XCTAssertThrowsError(try make(w: zero, x: one)) { XCTAssertTrue("\($0)".contains("w must be in [1, p)")) }
        XCTAssertThrowsError(try make(w: order, x: one)) { XCTAssertTrue("\($0)".contains("w must be in [1, p)")) }
        XCTAssertThrowsError(try make(w: one, x: order)) { XCTAssertTrue("\($0)".contains("x must be in [1, p)")) }
        XCTAssertThrowsError(try make(w: "01", x: one)) { XCTAssertTrue("\($0)".contains("w must be 32 bytes")) }
        XCTAssertNoThrow(try make(w: one, x: one))
        assertThrows(.invalidScalar("w must be 32 bytes, got 31"),
                     try Spake2(role: .a, passwordScalar: [UInt8](repeating: 1, count: 31), identityA: [], identityB: []))
    }

    func testPasswordScalarIsDeterministicReducedAndBoundToIdentities() throws {
        let pin = Array("482913".utf8)
        let idA = Array("host".utf8), idB = Array("pad".utf8)
        let w1 = try Spake2.passwordScalar(password: pin, identityA: idA, identityB: idB, parameters: fastScrypt)
        let w2 = try Spake2.passwordScalar(password: pin, identityA: idA, identityB: idB, parameters: fastScrypt)
        XCTAssertEqual(w1, w2)
        XCTAssertEqual(w1.count, 32)
        // Accepted as a scalar in [1, p).
        XCTAssertNoThrow(try Spake2(role: .a, passwordScalar: w1, identityA: idA, identityB: idB))
        XCTAssertNotEqual(w1, try Spake2.passwordScalar(password: Array("482914".utf8), identityA: idA,
                                                        identityB: idB, parameters: fastScrypt))
        XCTAssertNotEqual(w1, try Spake2.passwordScalar(password: pin, identityA: idB, identityB: idA,
                                                        parameters: fastScrypt))
        XCTAssertNotEqual(w1, try Spake2.passwordScalar(password: pin, identityA: idA, identityB: idB,
                                                        parameters: ScryptParameters(n: 1 << 11, r: 8, p: 1)))
        assertThrows(.emptyPassword, try Spake2.passwordScalar(password: [], identityA: idA, identityB: idB))
        assertThrows(.emptyPassword, try Spake2(role: .b, password: [], identityA: idA, identityB: idB))
    }

    func testBadScryptParametersSurfaceAsOpenSSLError() {
        // N must be a power of two > 1.
        XCTAssertThrowsError(try Spake2.passwordScalar(password: [1], identityA: [], identityB: [],
                                                       parameters: ScryptParameters(n: 3, r: 8, p: 1))) { error in
            guard case Spake2Error.openSSL(let op, _) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(op, "EVP_PBE_scrypt")
        }
    }
}
