import Foundation
import TestSupport
import Testing

@testable import ManagedCache

@Suite(.offCooperativePool) struct SHA256Tests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test func matchesTheFIPSTestVectors() {
        #expect(
            hex(SHA256.digest(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex(SHA256.digest([UInt8]()))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(SHA256.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // 1,000 × "a" spans block boundaries at odd offsets.
        #expect(
            hex(SHA256.digest([UInt8](repeating: 0x61, count: 1000)))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func fileNamesRoundTripAndContainOnlyHexDigits() {
        let id = FileID.makeNew(forKey: "../../etc/passwd")
        let name = id.fileName
        #expect(name.count == FileID.nameLength)
        #expect(name.allSatisfy { "0123456789abcdef-".contains($0) })
        #expect(name.withCString { FileID(fileName: $0) } == id)
        #expect("0123".withCString { FileID(fileName: $0) } == nil)
    }
}
