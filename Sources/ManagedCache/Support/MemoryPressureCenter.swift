import Dispatch
import Foundation
import ManagedCacheLocking

/// Hands every ``MemoryPressure`` signal to whoever subscribed: each `ObjectManager` of the
/// process, and the animation frame buffers of ManagedCacheUIKit. The shared center listens to
/// the system from its first subscription on (the table in ``MemoryPressure``); a center made on
/// its own (tests) hears only what is posted to it.
///
/// Handlers run on the thread that posts: the dispatch source's utility queue, the thread posting
/// the UIKit notification (main), or the caller of ``MemoryPressure/signal()``. They must not
/// block.
package final class MemoryPressureCenter: Sendable {
    /// The process's center, listening to the system.
    package static let shared = MemoryPressureCenter(listensToTheSystem: true)

    private struct State {
        var handlers: [UInt64: @Sendable (MemoryPressure) -> Void] = [:]
        var nextIdentifier: UInt64 = 0
        var systemSignals: SystemMemorySignals?
    }

    private let state = Lock(State())
    /// Whether the system's signals start with the first subscription (the shared center only).
    private let listensToTheSystem: Bool

    /// A center of its own, which hears only what is posted to it.
    package convenience init() {
        self.init(listensToTheSystem: false)
    }

    private init(listensToTheSystem: Bool) {
        self.listensToTheSystem = listensToTheSystem
    }

    /// Calls `handler` with every pressure posted from now on, until the returned subscription
    /// goes away.
    package func subscribe(_ handler: @escaping @Sendable (MemoryPressure) -> Void) -> MemoryPressureSubscription {
        let (identifier, starts) = state.withLock { state -> (UInt64, Bool) in
            state.nextIdentifier += 1
            state.handlers[state.nextIdentifier] = handler
            return (state.nextIdentifier, listensToTheSystem && state.systemSignals == nil)
        }
        if starts {
            let signals = SystemMemorySignals { [weak self] pressure in self?.post(pressure) }
            state.withLock { state in
                if state.systemSignals == nil { state.systemSignals = signals }
            }
        }
        return MemoryPressureSubscription { [weak self] in
            _ = self?.state.withLock { $0.handlers.removeValue(forKey: identifier) }
        }
    }

    /// Delivers `pressure` to every subscriber, on the calling thread (outside the lock).
    package func post(_ pressure: MemoryPressure) {
        let handlers = state.withLock { Array($0.handlers.values) }
        for handler in handlers { handler(pressure) }
    }

    /// How many subscriptions are alive.
    package var subscriberCount: Int { state.withLock { $0.handlers.count } }
}

/// A subscription to a ``MemoryPressureCenter``: it ends when this object goes away.
package final class MemoryPressureSubscription: Sendable {
    private let end: @Sendable () -> Void

    init(end: @escaping @Sendable () -> Void) {
        self.end = end
    }

    deinit {
        end()
    }
}

/// The system's memory signals, for as long as this object lives: the memory-pressure dispatch
/// source on Apple platforms, and UIKit's memory warning and its move to the background, which
/// iOS, tvOS and visionOS post. Linux's `Dispatch` has no memory-pressure source.
///
/// UIKit's two notifications are observed by name on every platform, with no platform
/// condition: where nothing posts them (macOS, watchOS, Linux) the observers never fire. So this
/// code is compiled on Linux too, and the Apple surface check compiles this module once for every
/// Apple platform, not once more each for macOS and watchOS. (No test posts them: the process's
/// center would trim every manager of the test run.)
private final class SystemMemorySignals: Sendable {
    #if canImport(Darwin)
    private let source: DispatchSourceBox
    #endif
    private let observations: [NotificationObservation]

    init(_ deliver: @escaping @Sendable (MemoryPressure) -> Void) {
        #if canImport(Darwin)
        source = DispatchSourceBox(deliver)
        #endif
        // UIKit's names, spelled out: this module does not import UIKit.
        observations = [
            NotificationObservation(Notification.Name("UIApplicationDidReceiveMemoryWarningNotification")) { deliver(.critical) },
            NotificationObservation(Notification.Name("UIApplicationDidEnterBackgroundNotification")) { deliver(.background) },
        ]
    }
}

#if canImport(Darwin)
/// The memory-pressure dispatch sources (`DispatchSource.makeMemoryPressureSource(eventMask:queue:)`):
/// one for warning events and one for critical events, so that each handler knows its pressure
/// without reading its source. Cancelled when this object goes away.
///
/// `@unchecked Sendable` is safe here: the sources are set once in `init` and only cancelled in
/// `deinit`; dispatch objects may be used from any thread.
private final class DispatchSourceBox: @unchecked Sendable {
    private let sources: [any DispatchSourceMemoryPressure]

    init(_ deliver: @escaping @Sendable (MemoryPressure) -> Void) {
        sources = [(DispatchSource.MemoryPressureEvent.warning, MemoryPressure.warning), (.critical, .critical)].map {
            event, pressure in
            let source = DispatchSource.makeMemoryPressureSource(eventMask: event, queue: .global(qos: .utility))
            source.setEventHandler { deliver(pressure) }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
#endif
