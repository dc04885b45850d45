import HIDCodecs

/// The evdev codes padgate reads (linux/input-event-codes.h), kept as typed constants so the code
/// that uses them reads like the header they come from. How padgate maps buttons to codes is
/// HIDCodecs' button table (`GamepadButtons.table`); the key names here are the D-pad keys and the
/// touchpad click, which are not buttons there, and the header's names that device tests check the
/// kernel's events against independently of that table.
public enum EvdevCode {
    public static let EV_SYN: UInt32 = 0x00, EV_KEY: UInt32 = 0x01, EV_ABS: UInt32 = 0x03, EV_MSC: UInt32 = 0x04, EV_FF: UInt32 = 0x15
    public static let SYN_REPORT: UInt32 = 0, SYN_DROPPED: UInt32 = 3
    public static let MSC_TIMESTAMP: UInt32 = 0x05

    public static let ABS_X: UInt32 = 0x00, ABS_Y: UInt32 = 0x01, ABS_Z: UInt32 = 0x02
    public static let ABS_RX: UInt32 = 0x03, ABS_RY: UInt32 = 0x04, ABS_RZ: UInt32 = 0x05
    public static let ABS_GAS: UInt32 = 0x09, ABS_BRAKE: UInt32 = 0x0a
    public static let ABS_HAT0X: UInt32 = 0x10, ABS_HAT0Y: UInt32 = 0x11
    public static let ABS_MT_POSITION_X: UInt32 = 0x35, ABS_MT_POSITION_Y: UInt32 = 0x36
    public static let ABS_MT_TRACKING_ID: UInt32 = 0x39

    public static let BTN_LEFT: UInt32 = 0x110
    public static let BTN_SOUTH: UInt32 = 0x130, BTN_EAST: UInt32 = 0x131, BTN_WEST: UInt32 = 0x134
    /// The kernel's older names for the same two codes, as xpad uses them: it reports an Xbox pad's
    /// X button (west) as BTN_X, which is BTN_NORTH's code, and Y (north) as BTN_Y, BTN_WEST's code.
    /// SDL's mapping database and every game written against xpad expect exactly that.
    public static let BTN_A: UInt32 = 0x130, BTN_B: UInt32 = 0x131, BTN_X: UInt32 = 0x133, BTN_Y: UInt32 = 0x134
    public static let BTN_TL: UInt32 = 0x136, BTN_TR: UInt32 = 0x137
    public static let BTN_SELECT: UInt32 = 0x13a, BTN_START: UInt32 = 0x13b, BTN_MODE: UInt32 = 0x13c
    public static let BTN_DPAD_UP: UInt32 = 0x220, BTN_DPAD_DOWN: UInt32 = 0x221, BTN_DPAD_LEFT: UInt32 = 0x222, BTN_DPAD_RIGHT: UInt32 = 0x223
    public static let FF_RUMBLE: UInt32 = 0x50
}
