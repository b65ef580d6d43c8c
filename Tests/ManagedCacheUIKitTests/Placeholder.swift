import Testing

@Test func placeholder_ManagedCacheUIKitTests() { #expect(Bool(true)) }
