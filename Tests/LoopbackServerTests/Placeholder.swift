import Testing

@Test func placeholder_LoopbackServerTests() { #expect(Bool(true)) }
