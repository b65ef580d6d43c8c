import Testing

@Test func placeholder_ManagedCacheTests() { #expect(Bool(true)) }
