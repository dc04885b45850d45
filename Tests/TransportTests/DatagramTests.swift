import XCTest
@testable import Transport

final class DatagramTests: XCTestCase {
    func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex { let j = s.index(i, offsetBy: 2); out.append(UInt8(s[i..<j], radix: 16)!); i = j }
        return out
    }

    /// The GCM specification's test case 16 (AES-256, 60-byte plaintext, 20-byte AAD).
    func testAESGCMMatchesTheSpecificationVector() throws {
        let key = hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let iv = hex("cafebabefacedbaddecaf888")
        let aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let plain = hex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
        let expected = hex("522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
                           + "76fc6ece0f4e1768cddf8853bb2d551b")
        var out = [UInt8](repeating: 0, count: plain.count + 16)
        let sealer = try GCMContext(key: key, encrypting: true)
        let ok = iv.withUnsafeBufferPointer { n in
            aad.withUnsafeBytes { a in plain.withUnsafeBytes { p in out.withUnsafeMutableBytes { sealer.seal(nonce: n.baseAddress!, aad: a, plaintext: p, out: $0) } } }
        }
        XCTAssertTrue(ok)
        XCTAssertEqual(out, expected)

        var opened = [UInt8](repeating: 0, count: plain.count)
        let opener = try GCMContext(key: key, encrypting: false)
        let verified = iv.withUnsafeBufferPointer { n in
            aad.withUnsafeBytes { a in
                expected.withUnsafeBytes { c in
                    opened.withUnsafeMutableBytes {
                        opener.open(nonce: n.baseAddress!, aad: a, ciphertext: UnsafeRawBufferPointer(rebasing: c[0..<plain.count]),
                                    tag: UnsafeRawBufferPointer(rebasing: c[plain.count...]), out: $0)
                    }
                }
            }
        }
        XCTAssertTrue(verified)
        XCTAssertEqual(opened, plain)
    }

    let keys = DirectionKeys(key: [UInt8](repeating: 7, count: 32), iv: [UInt8](repeating: 9, count: 12))

    func seal(_ sealer: DatagramSealer, _ payload: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 1500)
        let n = try payload.withUnsafeBytes { p in try out.withUnsafeMutableBytes { try sealer.seal(p, into: $0) } }
        return Array(out[0..<n])
    }

    func open(_ opener: DatagramOpener, _ datagram: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 1500)
        guard let n = datagram.withUnsafeBytes({ d in out.withUnsafeMutableBytes { opener.open(d, into: $0) } }) else { return nil }
        return Array(out[0..<n])
    }

    func testRoundTripAndHeader() throws {
        let sealer = try DatagramSealer(keys: keys, session: 0xA1B2C3D4)
        let opener = try DatagramOpener(keys: keys, session: 0xA1B2C3D4)
        let first = try seal(sealer, [1, 2, 3])
        XCTAssertEqual(Array(first[0..<16]), [0x50, 0x47, 1, 0, 0xA1, 0xB2, 0xC3, 0xD4, 0, 0, 0, 0, 0, 0, 0, 1])
        XCTAssertEqual(first.count, 3 + DatagramFormat.overhead)
        XCTAssertNotEqual(Array(first[16..<19]), [1, 2, 3], "payload travels encrypted")
        XCTAssertEqual(open(opener, first), [1, 2, 3])
        XCTAssertEqual(open(opener, try seal(sealer, [])), [], "an empty payload is a valid keep-alive")
    }

    func testForgedReplayedTruncatedAndForeignDatagramsAreDroppedAndCounted() throws {
        let sealer = try DatagramSealer(keys: keys, session: 1)
        let opener = try DatagramOpener(keys: keys, session: 1)
        let good = try seal(sealer, [0x10, 0x20, 0x30, 0x40])
        for index in [3, 15, 16, 19, good.count - 1] {  // flags (AAD), sequence (AAD), ciphertext, tag
            var forged = good
            forged[index] ^= 0x01
            XCTAssertNil(open(opener, forged), "bit flip at \(index)")
        }
        XCTAssertEqual(opener.rejected[.forged], 5)
        var far = good
        far[10] ^= 0x01
        XCTAssertNil(open(opener, far), "a sequence 2^40 ahead")
        XCTAssertEqual(opener.rejected[.implausibleSequence], 1, "refused before its tag is even checked")
        XCTAssertEqual(open(opener, good), [0x10, 0x20, 0x30, 0x40], "the genuine one still opens after forgeries")
        XCTAssertNil(open(opener, good))
        XCTAssertEqual(opener.rejected[.replayed], 1)
        XCTAssertNil(open(opener, Array(good.prefix(20))))
        XCTAssertEqual(opener.rejected[.truncated], 1)
        var foreign = good; foreign[0] = 0x00
        XCTAssertNil(open(opener, foreign))
        XCTAssertEqual(opener.rejected[.notPadgate], 1)

        let otherSession = try DatagramOpener(keys: keys, session: 2)
        XCTAssertNil(open(otherSession, try seal(sealer, [1])))
        XCTAssertEqual(otherSession.rejected[.wrongSession], 1)

        let wrongKey = try DatagramOpener(keys: DirectionKeys(key: [UInt8](repeating: 8, count: 32), iv: keys.iv), session: 1)
        XCTAssertNil(open(wrongKey, try seal(sealer, [1])))
        XCTAssertEqual(wrongKey.rejected[.forged], 1)
    }

    func testReorderedWithinTheWindowOpensOnceAndOldOnesAreRefused() throws {
        let sealer = try DatagramSealer(keys: keys, session: 1)
        let opener = try DatagramOpener(keys: keys, session: 1)
        let datagrams = try (0..<100).map { try seal(sealer, [UInt8($0)]) }
        XCTAssertNotNil(open(opener, datagrams[99]))
        XCTAssertEqual(open(opener, datagrams[60]), [60], "late but inside the 64-datagram window")
        XCTAssertNil(open(opener, datagrams[60]))
        XCTAssertNil(open(opener, datagrams[10]))
        XCTAssertEqual(opener.rejected[.tooOld], 1)
        XCTAssertEqual(opener.rejected[.replayed], 1)
    }

    func testReplayWindowSlides() {
        var window = ReplayWindow()
        XCTAssertEqual(window.check(5), .fresh); window.commit(5)
        XCTAssertEqual(window.check(5), .replayed)
        XCTAssertEqual(window.check(4), .fresh); window.commit(4)
        window.commit(200)
        XCTAssertEqual(window.check(5), .tooOld)
        XCTAssertEqual(window.check(137), .fresh, "200 - 63 is the oldest still inside")
        XCTAssertEqual(window.check(136), .tooOld)
    }

    func testSequencesNoSenderCanHaveReachedAreRefusedBeforeDecryption() throws {
        var window = ReplayWindow()
        XCTAssertEqual(window.check(ReplayWindow.maxJump + 1), .implausible, "a sender starts at 1")
        window.commit(10)
        XCTAssertEqual(window.check(10 + ReplayWindow.maxJump), .fresh)
        XCTAssertEqual(window.check(11 + ReplayWindow.maxJump), .implausible)
        XCTAssertEqual(window.check(.max), .implausible)

        let keys = DirectionKeys(key: [UInt8](repeating: 1, count: 32), iv: [UInt8](repeating: 2, count: 12))
        let opener = try DatagramOpener(keys: keys, session: 9)
        var junk = [UInt8](repeating: 0xEE, count: 64)
        junk[0] = 0x50; junk[1] = 0x47; junk[2] = 1; junk[3] = 0; junk[4] = 0; junk[5] = 0; junk[6] = 0; junk[7] = 9
        var out = [UInt8](repeating: 0, count: 64)
        XCTAssertNil(junk.withUnsafeBytes { d in out.withUnsafeMutableBytes { opener.open(d, into: $0) } })
        XCTAssertEqual(opener.rejected[.implausibleSequence], 1, "random sequence bytes: refused without an AES-GCM open")
        XCTAssertEqual(opener.rejected[.forged], 0)
    }
}
