import Foundation
import ManagedCache

/// The checksum kernel alone: `CRC32` (slicing-by-16) over 256 KiB buffers in the page cache's
/// stead (already in memory), against the slicing-by-8 it replaced and against `memcpy` of the
/// same bytes (what touching them once costs).
struct CRC32Scenario: BenchmarkScenario {
    let identifier = "crc32"
    let usesNetwork = false

    static let bufferSize = 256 << 10
    static let passes = 2_000

    func run(in context: BenchmarkContext) throws -> [ResultRow] {
        var generator = SeededGenerator(seed: 0xC3C)
        let source = (0..<Self.bufferSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var destination = [UInt8](repeating: 0, count: Self.bufferSize)
        let passes = context.pick(full: Self.passes, quick: 400)
        let expected = CRC32.checksum(source)
        var failure: String?
        let gigabytesPerSecond = { (seconds: Double) in Double(Self.bufferSize * passes) / seconds / 1e9 }
        let samples = context.measurement(full: 7, quick: 3).run([
            {
                gigabytesPerSecond(
                    Stopwatch.seconds {
                        source.withUnsafeBytes { raw in
                            for _ in 0..<passes {
                                var crc = CRC32()
                                crc.update(raw)
                                if crc.value != expected { failure = "slicing-by-16 disagrees" }
                            }
                        }
                    })
            },
            {
                gigabytesPerSecond(
                    Stopwatch.seconds {
                        source.withUnsafeBytes { raw in
                            for _ in 0..<passes where SlicingBy8CRC32.checksum(raw) != expected {
                                failure = "slicing-by-8 disagrees"
                            }
                        }
                    })
            },
            {
                gigabytesPerSecond(
                    Stopwatch.seconds {
                        source.withUnsafeBytes { raw in
                            destination.withUnsafeMutableBytes { target in
                                for _ in 0..<passes {
                                    target.copyMemory(from: raw)
                                    BlackHole.consume(target.baseAddress)
                                }
                            }
                        }
                    })
            },
        ])
        if let failure { throw BenchmarkFailure(failure) }
        let rate = { (value: Double) in Format.number(value) + " GB/s" }
        let note =
            "CRC-32 of a 256 KiB buffer already in memory, \(Format.grouped(passes)) times per repetition; "
            + "GB/s, median (min–max) of \(samples[0].count) repetitions"
        return [
            .comparing(
                "CRC-32 (slicing-by-16) vs the slicing-by-8 it replaced", ours: samples[0], baseline: samples[1],
                baselineName: "slicing-by-8", write: rate, direction: .atLeast, limit: 1.5, target: "≥ 1.5×",
                notes: [note]),
            .diagnostic(
                "(diagnostic) CRC-32 (slicing-by-16) vs `memcpy` of the same bytes", ours: samples[0],
                baseline: samples[2], baselineName: "`memcpy`", write: rate,
                notes: ["what touching the bytes once costs: the ceiling of any checksum"]),
        ]
    }
}
