public enum LoopbackServerPlaceholder {}
