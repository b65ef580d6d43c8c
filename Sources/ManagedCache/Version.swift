public enum ManagedCacheVersion { public static let string = "0.1.0" }
