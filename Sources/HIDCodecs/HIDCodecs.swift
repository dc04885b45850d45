public enum HIDCodecs {}
