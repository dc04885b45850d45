/*
 * sdl3-probe: what a game sees of a controller through SDL 3's gamepad API, for padgate's device
 * tests (Tests/DeviceTests/SDLClientTests.swift). Built by tools/build-sdl3.sh against Debian's
 * SDL 3 source package; the twin of sdl-probe.c (SDL 2), with the same arguments, commands and
 * JSON keys, so the tests drive either:
 *
 *   sdl3-probe --hidapi on|off --path NODE [--wait SECONDS]
 *
 *   info | state | rumble LOW HIGH MS | triggers LEFT RIGHT MS | led R G B | player N | effect HEX | quit
 *
 * (the protocol and its loop: probe-common.h). Exit codes: 0 after quit, 2 for usage errors, 3 if
 * no such gamepad appeared in time.
 *
 * Where SDL 3 differs from SDL 2:
 * - Its calls return bool (true on success) where SDL 2's returned 0: "rc" stays 0 on success and
 *   -1 on failure, as sdl-probe prints (the adapters above main). SDL_SetGamepadPlayerIndex
 *   reports failure too (SDL 2's returned nothing).
 * - Button names: SDL 3's enum is positional (SDL_GAMEPAD_BUTTON_SOUTH, _EAST, _WEST, _NORTH), but
 *   SDL_GetGamepadStringForButton keeps SDL 2's strings (map_StringForGamepadButton in
 *   src/joystick/SDL_gamepad.c): south "a", east "b", west "x", north "y", then "back", "guide",
 *   "start", "leftstick", "rightstick", "leftshoulder", "rightshoulder", "dpup", "dpdown", "dpleft",
 *   "dpright", "misc1", "paddle1".."paddle4", "touchpad", "misc2".."misc6". They are printed as
 *   they come: the same names the tests expect from SDL 2, always by position (SDL 3 has no
 *   SDL_GAMECONTROLLER_USE_BUTTON_LABELS hint: SDL_gamepad.c only reads it inside mappings).
 * - Axis names are SDL 2's too (map_StringForGamepadAxis): leftx, lefty, rightx, righty,
 *   lefttrigger, righttrigger.
 * - Capabilities come from the gamepad's properties (SDL_PROP_GAMEPAD_CAP_*), not Has* calls.
 */
#include <SDL3/SDL.h>
#include "probe-common.h"

static const char *type_name(SDL_GamepadType type) {
    switch (type) {
    case SDL_GAMEPAD_TYPE_STANDARD: return "standard";
    case SDL_GAMEPAD_TYPE_XBOX360: return "xbox360";
    case SDL_GAMEPAD_TYPE_XBOXONE: return "xboxone";
    case SDL_GAMEPAD_TYPE_PS3: return "ps3";
    case SDL_GAMEPAD_TYPE_PS4: return "ps4";
    case SDL_GAMEPAD_TYPE_PS5: return "ps5";
    case SDL_GAMEPAD_TYPE_NINTENDO_SWITCH_PRO: return "switch-pro";
    case SDL_GAMEPAD_TYPE_NINTENDO_SWITCH_JOYCON_LEFT: return "switch-joycon-left";
    case SDL_GAMEPAD_TYPE_NINTENDO_SWITCH_JOYCON_RIGHT: return "switch-joycon-right";
    case SDL_GAMEPAD_TYPE_NINTENDO_SWITCH_JOYCON_PAIR: return "switch-joycon-pair";
    default: return "unknown";
    }
}

static const char *boolean(bool value) { return value ? "true" : "false"; }

static SDL_Gamepad *open_by_path(const char *path, int wait_seconds) {
    Uint64 deadline = SDL_GetTicks() + (Uint64)wait_seconds * 1000;
    int count = 0;
    do {
        SDL_PumpEvents();
        SDL_JoystickID *ids = SDL_GetGamepads(&count);
        for (int i = 0; ids && i < count; i++) {
            const char *candidate = SDL_GetGamepadPathForID(ids[i]);
            if (SDL_IsGamepad(ids[i]) && candidate && strcmp(candidate, path) == 0) {
                SDL_Gamepad *pad = SDL_OpenGamepad(ids[i]);
                SDL_free(ids);
                return pad;
            }
        }
        SDL_free(ids);
        SDL_Delay(50);
    } while (SDL_GetTicks() < deadline);
    fprintf(stderr, "sdl3-probe: no gamepad at %s; SDL sees:", path);
    SDL_JoystickID *joysticks = SDL_GetJoysticks(&count);
    for (int i = 0; joysticks && i < count; i++)
        fprintf(stderr, " [%s %s%s]", SDL_GetJoystickNameForID(joysticks[i]), SDL_GetJoystickPathForID(joysticks[i]),
                SDL_IsGamepad(joysticks[i]) ? "" : " (no gamepad)");
    fprintf(stderr, "\n");
    SDL_free(joysticks);
    return NULL;
}

/* A JSON array of SDL's names for the buttons `which` selects (the pad has them, or holds them down). */
static void print_buttons(SDL_Gamepad *pad, bool (*which)(SDL_Gamepad *, SDL_GamepadButton)) {
    int first = 1;
    printf("[");
    for (int b = 0; b < SDL_GAMEPAD_BUTTON_COUNT; b++) {
        if (!which(pad, (SDL_GamepadButton)b)) continue;
        printf("%s\"%s\"", first ? "" : ",", SDL_GetGamepadStringForButton((SDL_GamepadButton)b));
        first = 0;
    }
    printf("]");
}

static int fingers(SDL_Gamepad *pad) {
    return SDL_GetNumGamepadTouchpads(pad) > 0 ? SDL_GetNumGamepadTouchpadFingers(pad, 0) : 0;
}

static void info(SDL_Gamepad *pad) {
    SDL_Joystick *joystick = SDL_GetGamepadJoystick(pad);
    SDL_PropertiesID props = SDL_GetGamepadProperties(pad);
    int version = SDL_GetVersion();
    char version_text[64];
    snprintf(version_text, sizeof version_text, "%d.%d.%d", SDL_VERSIONNUM_MAJOR(version), SDL_VERSIONNUM_MINOR(version),
             SDL_VERSIONNUM_MICRO(version));
    printf("{");
    print_string("sdl_version", version_text, 1);
    print_string("name", SDL_GetGamepadName(pad), 1);
    print_string("path", SDL_GetGamepadPath(pad), 1);
    print_string("type", type_name(SDL_GetGamepadType(pad)), 1);
    print_string("serial", SDL_GetGamepadSerial(pad), 1);
    printf("\"vendor\":%u,\"product\":%u,\"player_index\":%d,", SDL_GetGamepadVendor(pad), SDL_GetGamepadProduct(pad),
           SDL_GetGamepadPlayerIndex(pad));
    printf("\"has_led\":%s,\"has_rumble\":%s,\"has_rumble_triggers\":%s,\"has_player_led\":%s,",
           boolean(SDL_GetBooleanProperty(props, SDL_PROP_GAMEPAD_CAP_RGB_LED_BOOLEAN, false)),
           boolean(SDL_GetBooleanProperty(props, SDL_PROP_GAMEPAD_CAP_RUMBLE_BOOLEAN, false)),
           boolean(SDL_GetBooleanProperty(props, SDL_PROP_GAMEPAD_CAP_TRIGGER_RUMBLE_BOOLEAN, false)),
           boolean(SDL_GetBooleanProperty(props, SDL_PROP_GAMEPAD_CAP_PLAYER_LED_BOOLEAN, false)));
    printf("\"touchpads\":%d,\"fingers\":%d,", SDL_GetNumGamepadTouchpads(pad), fingers(pad));
    printf("\"gyro\":%s,\"accel\":%s,", boolean(SDL_GamepadSensorEnabled(pad, SDL_SENSOR_GYRO)),
           boolean(SDL_GamepadSensorEnabled(pad, SDL_SENSOR_ACCEL)));
    printf("\"joystick_buttons\":%d,\"joystick_axes\":%d,\"buttons\":", SDL_GetNumJoystickButtons(joystick), SDL_GetNumJoystickAxes(joystick));
    print_buttons(pad, SDL_GamepadHasButton);
    printf("}\n");
}

static void state(SDL_Gamepad *pad) {
    SDL_UpdateGamepads();
    /* A pad's sensors may appear after it is opened, as with SDL 2. */
    for (int s = SDL_SENSOR_ACCEL; s <= SDL_SENSOR_GYRO; s++)
        if (SDL_GamepadHasSensor(pad, (SDL_SensorType)s) && !SDL_GamepadSensorEnabled(pad, (SDL_SensorType)s))
            SDL_SetGamepadSensorEnabled(pad, (SDL_SensorType)s, true);
    printf("{\"buttons\":");
    print_buttons(pad, SDL_GetGamepadButton);
    printf(",\"axes\":{");
    for (int a = 0; a < SDL_GAMEPAD_AXIS_COUNT; a++)
        printf("%s\"%s\":%d", a ? "," : "", SDL_GetGamepadStringForAxis((SDL_GamepadAxis)a), SDL_GetGamepadAxis(pad, (SDL_GamepadAxis)a));
    printf("},\"touch\":[");
    for (int f = 0; f < fingers(pad); f++) {
        bool down = false;
        float x = 0, y = 0, pressure = 0;
        SDL_GetGamepadTouchpadFinger(pad, 0, f, &down, &x, &y, &pressure);
        printf("%s{\"down\":%s,\"x\":%.6f,\"y\":%.6f}", f ? "," : "", boolean(down), x, y);
    }
    /* Every touchpad's fingers (a Steam Deck has two pads): "touch" is the first's. */
    printf("],\"touchpads\":[");
    for (int t = 0; t < SDL_GetNumGamepadTouchpads(pad); t++) {
        printf("%s[", t ? "," : "");
        for (int f = 0; f < SDL_GetNumGamepadTouchpadFingers(pad, t); f++) {
            bool down = false;
            float x = 0, y = 0, pressure = 0;
            SDL_GetGamepadTouchpadFinger(pad, t, f, &down, &x, &y, &pressure);
            printf("%s{\"down\":%s,\"x\":%.6f,\"y\":%.6f}", f ? "," : "", boolean(down), x, y);
        }
        printf("]");
    }
    printf("]");
    /* rad/s and m/s², as SDL 2 (SDL_sensor.h). */
    float data[3];
    if (SDL_GetGamepadSensorData(pad, SDL_SENSOR_GYRO, data, 3)) printf(",\"gyro\":[%.6f,%.6f,%.6f]", data[0], data[1], data[2]);
    if (SDL_GetGamepadSensorData(pad, SDL_SENSOR_ACCEL, data, 3)) printf(",\"accel\":[%.6f,%.6f,%.6f]", data[0], data[1], data[2]);
    printf("}\n");
}

/* SDL 3's bool as sdl-probe's rc: 0 on success, -1 on failure. */
static int rc(bool ok) { return ok ? 0 : -1; }
static void info_command(void *pad) { info(pad); }
static void state_command(void *pad) { state(pad); }
static int rumble(void *pad, unsigned low, unsigned high, unsigned ms) { return rc(SDL_RumbleGamepad(pad, (Uint16)low, (Uint16)high, ms)); }
static int triggers(void *pad, unsigned left, unsigned right, unsigned ms) { return rc(SDL_RumbleGamepadTriggers(pad, (Uint16)left, (Uint16)right, ms)); }
static int led(void *pad, unsigned red, unsigned green, unsigned blue) { return rc(SDL_SetGamepadLED(pad, (Uint8)red, (Uint8)green, (Uint8)blue)); }
static int player(void *pad, int index) { return rc(SDL_SetGamepadPlayerIndex(pad, index)); }
static int effect(void *pad, const unsigned char *bytes, int count) { return rc(SDL_SendGamepadEffect(pad, bytes, count)); }

static const struct probe_commands commands = {
    info_command, state_command, rumble, triggers, led, player, effect, SDL_UpdateGamepads, SDL_GetError,
};

int main(int argc, char **argv) {
    struct probe_args args;
    if (probe_parse_args(argc, argv, "sdl3-probe", &args) != 0) return 2;
    SDL_SetHint(SDL_HINT_JOYSTICK_HIDAPI, args.hidapi ? "1" : "0");
    if (!SDL_Init(SDL_INIT_GAMEPAD | SDL_INIT_SENSOR)) {
        fprintf(stderr, "sdl3-probe: SDL_Init: %s\n", SDL_GetError());
        return 2;
    }
    SDL_Gamepad *pad = open_by_path(args.path, args.wait_seconds);
    if (!pad) { SDL_Quit(); return 3; }
    SDL_SetGamepadSensorEnabled(pad, SDL_SENSOR_GYRO, true);
    SDL_SetGamepadSensorEnabled(pad, SDL_SENSOR_ACCEL, true);
    probe_run(pad, &commands);
    SDL_CloseGamepad(pad);
    SDL_Quit();
    return 0;
}
