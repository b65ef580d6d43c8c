import Foundation

extension ObjectManager {
    /// Manages a main-actor user: reads its `objectRequest`, `objectDecoder` and `wantsPreviews` here, on the main
    /// actor, attaches it (weakly) to the handler of its key, and starts or joins the load.
    ///
    /// Everything `manage` does for a `ManagedObjectUser` applies: one shared object per key,
    /// exactly one final callback per call, the loading buffer, progress, failure memory. A memory
    /// hit (or an object a live handler shares) is delivered before this returns; every other
    /// callback runs on the main actor. A `nil` request detaches the user.
    ///
    /// - Parameter user: The user, held weakly: keep a strong reference for as long as it wants
    ///   the object. Managing it again with another request (cell reuse) replaces the old one.
    @MainActor
    public func manage<User: MainActorObjectUser>(_ user: User) {
        guard let request = user.objectRequest else {
            unmanage(user)
            return
        }
        let wantsPreviews = user.wantsPreviews
        let call = ManageCall(
            request: request, userID: ObjectIdentifier(user), delivery: .mainQueue, wantsPreviews: wantsPreviews,
            isAwaiting: false)
        manage(
            call, decoder: user.objectDecoder, link: { MainActorUserLink(user, wantsPreviews: wantsPreviews) },
            deliverHit: { object, request in
                user.receiveMemoryHit(object, request: request)
            })
    }

    /// Detaches a main-actor user from whatever it was managed for; it receives no more
    /// callbacks for that request. Callable from any thread.
    ///
    /// - Parameter user: The user; nothing happens when it is not managed.
    public func unmanage<User: MainActorObjectUser>(_ user: User) {
        let work = decide(.unmanage(ObjectIdentifier(user))).work
        performer.perform(work)
    }
}
