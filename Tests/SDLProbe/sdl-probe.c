/*
 * sdl-probe: what a game sees of a controller through the system's libsdl2, for padgate's device
 * tests (Tests/DeviceTests/SDLClientTests.swift). Built by tools/build-sdl-probe.sh.
 *
 *   sdl-probe --hidapi on|off --path NODE [--wait SECONDS]
 *
 * Opens the game controller whose SDL path is NODE (/dev/hidraw* through SDL's HIDAPI drivers,
 * /dev/input/event* through its evdev driver), enables its gyro and accelerometer, and answers
 * one command per stdin line with one JSON line on stdout (probe-common.h, shared with
 * sdl3-probe.c):
 *
 *   info | state | rumble LOW HIGH MS | triggers LEFT RIGHT MS | led R G B | player N | effect HEX | quit
 *
 * Exit codes: 0 after quit, 2 for usage errors, 3 if no such controller appeared in time.
 */
#include <SDL.h>
#include "probe-common.h"

static const char *type_name(SDL_GameControllerType type) {
    switch (type) {
    case SDL_CONTROLLER_TYPE_XBOX360: return "xbox360";
    case SDL_CONTROLLER_TYPE_XBOXONE: return "xboxone";
    case SDL_CONTROLLER_TYPE_PS3: return "ps3";
    case SDL_CONTROLLER_TYPE_PS4: return "ps4";
    case SDL_CONTROLLER_TYPE_PS5: return "ps5";
    case SDL_CONTROLLER_TYPE_NINTENDO_SWITCH_PRO: return "switch-pro";
    case SDL_CONTROLLER_TYPE_VIRTUAL: return "virtual";
    default: return "unknown";
    }
}

static SDL_GameController *open_by_path(const char *path, int wait_seconds) {
    Uint32 deadline = SDL_GetTicks() + (Uint32)wait_seconds * 1000;
    do {
        SDL_PumpEvents();
        for (int i = 0; i < SDL_NumJoysticks(); i++) {
            const char *candidate = SDL_GameControllerPathForIndex(i);
            if (SDL_IsGameController(i) && candidate && strcmp(candidate, path) == 0) return SDL_GameControllerOpen(i);
        }
        SDL_Delay(50);
    } while (!SDL_TICKS_PASSED(SDL_GetTicks(), deadline));
    fprintf(stderr, "sdl-probe: no game controller at %s; SDL sees:", path);
    for (int i = 0; i < SDL_NumJoysticks(); i++) fprintf(stderr, " [%s %s]", SDL_JoystickNameForIndex(i), SDL_GameControllerPathForIndex(i));
    fprintf(stderr, "\n");
    return NULL;
}

/* A JSON array of SDL's names for the buttons `which` selects (the pad has them, or holds them down). */
static void print_buttons(SDL_GameController *pad, SDL_bool (*which)(SDL_GameController *, SDL_GameControllerButton)) {
    int first = 1;
    printf("[");
    for (int b = 0; b < SDL_CONTROLLER_BUTTON_MAX; b++) {
        if (!which(pad, (SDL_GameControllerButton)b)) continue;
        printf("%s\"%s\"", first ? "" : ",", SDL_GameControllerGetStringForButton((SDL_GameControllerButton)b));
        first = 0;
    }
    printf("]");
}

static SDL_bool button_pressed(SDL_GameController *pad, SDL_GameControllerButton button) {
    return SDL_GameControllerGetButton(pad, button) ? SDL_TRUE : SDL_FALSE;
}

static void info(SDL_GameController *pad) {
    SDL_Joystick *joystick = SDL_GameControllerGetJoystick(pad);
    SDL_version version;
    char version_text[64];
    SDL_GetVersion(&version);
    snprintf(version_text, sizeof version_text, "%d.%d.%d", version.major, version.minor, version.patch);
    printf("{");
    print_string("sdl_version", version_text, 1);
    print_string("name", SDL_GameControllerName(pad), 1);
    print_string("path", SDL_GameControllerPath(pad), 1);
    print_string("type", type_name(SDL_GameControllerGetType(pad)), 1);
    print_string("serial", SDL_GameControllerGetSerial(pad), 1);
    printf("\"vendor\":%u,\"product\":%u,\"player_index\":%d,", SDL_GameControllerGetVendor(pad), SDL_GameControllerGetProduct(pad),
           SDL_GameControllerGetPlayerIndex(pad));
    printf("\"has_led\":%s,\"has_rumble\":%s,\"has_rumble_triggers\":%s,", SDL_GameControllerHasLED(pad) ? "true" : "false",
           SDL_GameControllerHasRumble(pad) ? "true" : "false", SDL_GameControllerHasRumbleTriggers(pad) ? "true" : "false");
    printf("\"touchpads\":%d,\"fingers\":%d,", SDL_GameControllerGetNumTouchpads(pad),
           SDL_GameControllerGetNumTouchpads(pad) > 0 ? SDL_GameControllerGetNumTouchpadFingers(pad, 0) : 0);
    printf("\"gyro\":%s,\"accel\":%s,", SDL_GameControllerIsSensorEnabled(pad, SDL_SENSOR_GYRO) ? "true" : "false",
           SDL_GameControllerIsSensorEnabled(pad, SDL_SENSOR_ACCEL) ? "true" : "false");
    printf("\"joystick_buttons\":%d,\"joystick_axes\":%d,\"buttons\":", SDL_JoystickNumButtons(joystick), SDL_JoystickNumAxes(joystick));
    print_buttons(pad, SDL_GameControllerHasButton);
    printf("}\n");
}

static void state(SDL_GameController *pad) {
    SDL_GameControllerUpdate();
    /* A pad's sensors may appear after it is opened (SDL's PS5 driver adds them in enhanced mode). */
    for (int s = SDL_SENSOR_ACCEL; s <= SDL_SENSOR_GYRO; s++)
        if (SDL_GameControllerHasSensor(pad, (SDL_SensorType)s) && !SDL_GameControllerIsSensorEnabled(pad, (SDL_SensorType)s))
            SDL_GameControllerSetSensorEnabled(pad, (SDL_SensorType)s, SDL_TRUE);
    printf("{\"buttons\":");
    print_buttons(pad, button_pressed);
    printf(",\"axes\":{");
    for (int a = 0; a < SDL_CONTROLLER_AXIS_MAX; a++)
        printf("%s\"%s\":%d", a ? "," : "", SDL_GameControllerGetStringForAxis((SDL_GameControllerAxis)a),
               SDL_GameControllerGetAxis(pad, (SDL_GameControllerAxis)a));
    printf("},\"touch\":[");
    int fingers = SDL_GameControllerGetNumTouchpads(pad) > 0 ? SDL_GameControllerGetNumTouchpadFingers(pad, 0) : 0;
    for (int f = 0; f < fingers; f++) {
        Uint8 down = 0;
        float x = 0, y = 0, pressure = 0;
        SDL_GameControllerGetTouchpadFinger(pad, 0, f, &down, &x, &y, &pressure);
        printf("%s{\"down\":%s,\"x\":%.6f,\"y\":%.6f}", f ? "," : "", down ? "true" : "false", x, y);
    }
    /* Every touchpad's fingers (a Steam Deck has two pads): "touch" is the first's. */
    printf("],\"touchpads\":[");
    for (int t = 0; t < SDL_GameControllerGetNumTouchpads(pad); t++) {
        printf("%s[", t ? "," : "");
        for (int f = 0; f < SDL_GameControllerGetNumTouchpadFingers(pad, t); f++) {
            Uint8 down = 0;
            float x = 0, y = 0, pressure = 0;
            SDL_GameControllerGetTouchpadFinger(pad, t, f, &down, &x, &y, &pressure);
            printf("%s{\"down\":%s,\"x\":%.6f,\"y\":%.6f}", f ? "," : "", down ? "true" : "false", x, y);
        }
        printf("]");
    }
    printf("]");
    float data[3];
    if (SDL_GameControllerGetSensorData(pad, SDL_SENSOR_GYRO, data, 3) == 0)
        printf(",\"gyro\":[%.6f,%.6f,%.6f]", data[0], data[1], data[2]);
    if (SDL_GameControllerGetSensorData(pad, SDL_SENSOR_ACCEL, data, 3) == 0)
        printf(",\"accel\":[%.6f,%.6f,%.6f]", data[0], data[1], data[2]);
    printf("}\n");
}

/* SDL 2's calls already answer 0 or -1. */
static void info_command(void *pad) { info(pad); }
static void state_command(void *pad) { state(pad); }
static int rumble(void *pad, unsigned low, unsigned high, unsigned ms) { return SDL_GameControllerRumble(pad, (Uint16)low, (Uint16)high, ms); }
static int triggers(void *pad, unsigned left, unsigned right, unsigned ms) {
    return SDL_GameControllerRumbleTriggers(pad, (Uint16)left, (Uint16)right, ms);
}
static int led(void *pad, unsigned red, unsigned green, unsigned blue) { return SDL_GameControllerSetLED(pad, (Uint8)red, (Uint8)green, (Uint8)blue); }
static int player(void *pad, int index) { SDL_GameControllerSetPlayerIndex(pad, index); return 0; }
static int effect(void *pad, const unsigned char *bytes, int count) { return SDL_GameControllerSendEffect(pad, bytes, count); }

static const struct probe_commands commands = {
    info_command, state_command, rumble, triggers, led, player, effect, SDL_GameControllerUpdate, SDL_GetError,
};

int main(int argc, char **argv) {
    struct probe_args args;
    if (probe_parse_args(argc, argv, "sdl-probe", &args) != 0) return 2;
    SDL_SetHint(SDL_HINT_JOYSTICK_HIDAPI, args.hidapi ? "1" : "0");
    if (SDL_Init(SDL_INIT_GAMECONTROLLER | SDL_INIT_SENSOR) != 0) {
        fprintf(stderr, "sdl-probe: SDL_Init: %s\n", SDL_GetError());
        return 2;
    }
    SDL_GameController *pad = open_by_path(args.path, args.wait_seconds);
    if (!pad) { SDL_Quit(); return 3; }
    SDL_GameControllerSetSensorEnabled(pad, SDL_SENSOR_GYRO, SDL_TRUE);
    SDL_GameControllerSetSensorEnabled(pad, SDL_SENSOR_ACCEL, SDL_TRUE);
    probe_run(pad, &commands);
    SDL_GameControllerClose(pad);
    SDL_Quit();
    return 0;
}
