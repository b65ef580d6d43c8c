// `import ManagedCacheUIKit` alone is enough for image users: the engine's types (`ObjectManager`,
// `ObjectRequest`, the user protocols, `ManagedCacheError`) come with it, as UI companion
// libraries commonly re-export their core.
@_exported import ManagedCache
