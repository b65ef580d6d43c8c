import Foundation

/// How figures are written in the table: grouped thousands, a few significant digits, units.
enum Format {
    /// `12,345`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// A number with about three significant digits (`0.0123`, `1.23`, `12.3`, `1,234`).
    static func number(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1_000 { return grouped(Int(value.rounded())) }
        if magnitude >= 100 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 { return String(format: "%.2f", value) }
        if magnitude == 0 { return "0" }
        return String(format: "%.3g", value)
    }

    /// A ratio: `1.23×`.
    static func ratio(_ value: Double) -> String {
        number(value) + "×"
    }

    /// Bytes in KiB or MiB: `512 B`, `16.0 KiB`, `48.2 MiB`.
    static func bytes(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1_048_576 { return number(value / 1_048_576) + " MiB" }
        if magnitude >= 1_024 { return number(value / 1_024) + " KiB" }
        return String(format: "%.0f B", value)
    }

    /// Seconds as `850 ms` or `2.35 s`.
    static func seconds(_ value: Double) -> String {
        abs(value) < 1 ? number(value * 1_000) + " ms" : number(value) + " s"
    }

    /// The median with the range of the repetitions: `63.2 ns (61.0–70.1)`, written by `write`.
    static func median(_ samples: Samples, _ write: (Double) -> String) -> String {
        guard samples.count > 1 else { return write(samples.median) }
        return "\(write(samples.median)) (\(write(samples.minimum))–\(write(samples.maximum)))"
    }
}
