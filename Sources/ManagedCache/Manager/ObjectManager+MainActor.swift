import Foundation

extension ObjectManager {
    /// Manages a main-actor user: reads its `objectRequest` and `objectDecoder` here, on the main
    /// actor, attaches it (weakly) to the handler of its key, and starts or joins the load.
    ///
    /// Everything `manage` does for a `ManagedObjectUser` applies: one shared object per key,
    /// exactly one final callback per call, the loading buffer, progress, failure memory. A memory
    /// hit (or an object a live handler shares) is delivered before this returns; every other
    /// callback runs on the main actor. A `nil` request detaches the user.
    @MainActor
    public func manage<User: MainActorObjectUser>(_ user: User) {
        guard let request = user.objectRequest else {
            unmanage(user)
            return
        }
        let call = ManageCall(request: request, userID: ObjectIdentifier(user), delivery: .mainQueue, isAwaiting: false)
        manage(call, decoder: user.objectDecoder, link: { MainActorUserLink(user) }, deliverHit: { event, request in
            user.receive(event, request: request)
        })
    }

    /// Detaches a main-actor user from whatever it was managed for; it receives no more
    /// callbacks for that request. Callable from any thread.
    public func unmanage<User: MainActorObjectUser>(_ user: User) {
        let work = state.withLock { _detach(userID: ObjectIdentifier(user), in: &$0) }
        perform(work)
    }
}
