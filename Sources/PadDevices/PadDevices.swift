import CUdev
import CEvdev
import CHidapi
import CLinuxInput
public enum PadDevices {}
