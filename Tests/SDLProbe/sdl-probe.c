/*
 * sdl-probe: what a game sees of a controller through the system's libsdl2, for padgate's device
 * tests (Tests/DeviceTests/SDLClientTests.swift). Built by tools/build-sdl-probe.sh.
 *
 *   sdl-probe --hidapi on|off --path NODE [--wait SECONDS]
 *
 * Opens the game controller whose SDL path is NODE (/dev/hidraw* through SDL's HIDAPI drivers,
 * /dev/input/event* through its evdev driver), enables its gyro and accelerometer, and answers
 * one command per stdin line with one JSON line on stdout:
 *
 *   info | state | rumble LOW HIGH MS | triggers LEFT RIGHT MS | led R G B | player N | effect HEX | quit
 *
 * Exit codes: 0 after quit, 2 for usage errors, 3 if no such controller appeared in time.
 */
#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void print_string(const char *key, const char *value, int comma) {
    printf("\"%s\":\"", key);
    for (const char *c = value ? value : ""; *c; c++) {
        if (*c == '"' || *c == '\\') printf("\\%c", *c);
        else if ((unsigned char)*c < 0x20) printf("\\u%04x", *c);
        else putchar(*c);
    }
    printf("\"%s", comma ? "," : "");
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
    printf("]");
    float data[3];
    if (SDL_GameControllerGetSensorData(pad, SDL_SENSOR_GYRO, data, 3) == 0)
        printf(",\"gyro\":[%.6f,%.6f,%.6f]", data[0], data[1], data[2]);
    if (SDL_GameControllerGetSensorData(pad, SDL_SENSOR_ACCEL, data, 3) == 0)
        printf(",\"accel\":[%.6f,%.6f,%.6f]", data[0], data[1], data[2]);
    printf("}\n");
}

static void result(const char *command, int rc) {
    printf("{\"command\":\"%s\",\"rc\":%d", command, rc);
    if (rc != 0) { printf(","); print_string("error", SDL_GetError(), 0); }
    printf("}\n");
}

int main(int argc, char **argv) {
    const char *hidapi = NULL, *path = NULL;
    int wait_seconds = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--hidapi") == 0) hidapi = argv[i + 1];
        else if (strcmp(argv[i], "--path") == 0) path = argv[i + 1];
        else if (strcmp(argv[i], "--wait") == 0) wait_seconds = atoi(argv[i + 1]);
    }
    if (!hidapi || !path || (strcmp(hidapi, "on") && strcmp(hidapi, "off"))) {
        fprintf(stderr, "usage: sdl-probe --hidapi on|off --path NODE [--wait SECONDS]\n");
        return 2;
    }
    SDL_SetHint(SDL_HINT_JOYSTICK_HIDAPI, strcmp(hidapi, "on") == 0 ? "1" : "0");
    if (SDL_Init(SDL_INIT_GAMECONTROLLER | SDL_INIT_SENSOR) != 0) {
        fprintf(stderr, "sdl-probe: SDL_Init: %s\n", SDL_GetError());
        return 2;
    }
    SDL_GameController *pad = open_by_path(path, wait_seconds);
    if (!pad) { SDL_Quit(); return 3; }
    SDL_GameControllerSetSensorEnabled(pad, SDL_SENSOR_GYRO, SDL_TRUE);
    SDL_GameControllerSetSensorEnabled(pad, SDL_SENSOR_ACCEL, SDL_TRUE);
    setvbuf(stdout, NULL, _IOLBF, 0);
    info(pad);

    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        unsigned a = 0, b = 0, c = 0;
        int n = 0;
        char hex[256];
        if (strncmp(line, "quit", 4) == 0) break;
        else if (strncmp(line, "info", 4) == 0) info(pad);
        else if (strncmp(line, "state", 5) == 0) state(pad);
        else if (sscanf(line, "rumble %u %u %u", &a, &b, &c) == 3) result("rumble", SDL_GameControllerRumble(pad, (Uint16)a, (Uint16)b, c));
        else if (sscanf(line, "triggers %u %u %u", &a, &b, &c) == 3) result("triggers", SDL_GameControllerRumbleTriggers(pad, (Uint16)a, (Uint16)b, c));
        else if (sscanf(line, "led %u %u %u", &a, &b, &c) == 3) result("led", SDL_GameControllerSetLED(pad, (Uint8)a, (Uint8)b, (Uint8)c));
        else if (sscanf(line, "player %d", &n) == 1) { SDL_GameControllerSetPlayerIndex(pad, n); result("player", 0); }
        else if (sscanf(line, "effect %255s", hex) == 1) {
            Uint8 bytes[128];
            int count = 0;
            for (const char *h = hex; h[0] && h[1] && count < (int)sizeof bytes; h += 2) {
                unsigned byte;
                if (sscanf(h, "%2x", &byte) != 1) break;
                bytes[count++] = (Uint8)byte;
            }
            result("effect", SDL_GameControllerSendEffect(pad, bytes, count));
        } else { printf("{\"error\":\"unknown command\"}\n"); }
        /* Let SDL's HIDAPI drivers write what the command queued before the next one. */
        SDL_GameControllerUpdate();
    }
    SDL_GameControllerClose(pad);
    SDL_Quit();
    return 0;
}
