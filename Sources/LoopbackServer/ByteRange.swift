/// A parsed `Range` header for a body of known length (RFC 9110 §14.1.2), single ranges only.
enum ByteRange: Equatable {
    /// Send bytes `lower...upper` (inclusive, already clamped to the body) with `206`.
    case satisfiable(lower: Int, upper: Int)
    /// A well-formed range that starts past the end: `416`.
    case unsatisfiable
    /// Malformed, multiple ranges, or a unit other than bytes: send the full body with `200`.
    case ignored

    /// Parses `bytes=N-`, `bytes=N-M` and `bytes=-N` (the last N bytes).
    init(header: String, length: Int) {
        let value = header.drop { $0 == " " }
        guard value.hasPrefix("bytes="), !value.contains(",") else {
            self = .ignored
            return
        }
        let spec = value.dropFirst("bytes=".count).trimmingSpaces()
        guard let dash = spec.firstIndex(of: "-") else {
            self = .ignored
            return
        }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            // Suffix range: the last N bytes.
            guard let suffix = Int(last), suffix > 0 else {
                self = last == "0" ? .unsatisfiable : .ignored
                return
            }
            guard length > 0 else {
                self = .unsatisfiable
                return
            }
            self = .satisfiable(lower: max(0, length - suffix), upper: length - 1)
            return
        }
        guard let lower = Int(first), lower >= 0 else {
            self = .ignored
            return
        }
        var upper = length - 1
        if !last.isEmpty {
            guard let parsed = Int(last), parsed >= lower else {
                self = .ignored
                return
            }
            upper = min(parsed, length - 1)
        }
        self = lower < length ? .satisfiable(lower: lower, upper: upper) : .unsatisfiable
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var trimmed = self
        while trimmed.first == " " { trimmed.removeFirst() }
        while trimmed.last == " " { trimmed.removeLast() }
        return trimmed
    }
}
