/// A binary min-heap: the smallest element first. Used for the file caches' expiry queue and the
/// manager's prefetch queue.
struct MinHeap<Element: Comparable & Sendable>: Sendable {
    private(set) var elements: [Element] = []

    init() {}

    /// Builds a heap of `elements` in linear time.
    init(_ elements: [Element]) {
        self.elements = elements
        var index = elements.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    var count: Int { elements.count }
    var minimum: Element? { elements.first }

    mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popMinimum() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let minimum = elements.removeLast()
        siftDown(0)
        return minimum
    }

    mutating func removeAll() {
        elements.removeAll()
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < elements.count else { return }
            var smallest = left
            if left + 1 < elements.count && elements[left + 1] < elements[left] { smallest = left + 1 }
            guard elements[smallest] < elements[parent] else { return }
            elements.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
