/*
 * What sdl-probe.c (SDL 2) and sdl3-probe.c (SDL 3) share: their arguments, the JSON string writer
 * and the command loop. Each probe supplies its SDL's calls (struct probe_commands), so both speak
 * the same protocol:
 *
 *   PROBE --hidapi on|off --path NODE [--wait SECONDS]
 *
 *   info | state | rumble LOW HIGH MS | triggers LEFT RIGHT MS | led R G B | player N | effect HEX | quit
 *
 * one JSON line out per line in. A command's "rc" is 0 on success and -1 on failure, with SDL's
 * error beside it. Included by exactly one file of each probe.
 */
/* Built with -D_GNU_SOURCE (dladdr's Dl_info): SDL's headers come first. */
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A probe that crashes says where, on stderr, which the tests print: each frame's offset in the
 * probe (SDL is linked in), for `addr2line -f -e PROBE OFFSET` on the unstripped binary. */
static void probe_crashed(int sig) {
    void *frames[48];
    int n = backtrace(frames, 48);
    Dl_info self;
    char *base = dladdr((void *)probe_crashed, &self) ? (char *)self.dli_fbase : NULL;
    char line[64];
    int len = snprintf(line, sizeof line, "probe: signal %d; frames (offsets in the probe):", sig);
    if (write(2, line, (size_t)len) < 0) _exit(128 + sig);
    for (int i = 0; i < n; i++) {
        len = snprintf(line, sizeof line, " 0x%lx", (unsigned long)((char *)frames[i] - base));
        if (write(2, line, (size_t)len) < 0) break;
    }
    if (write(2, "\n", 1) < 0) _exit(128 + sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void probe_report_crashes(void) {
    signal(SIGSEGV, probe_crashed);
    signal(SIGBUS, probe_crashed);
    signal(SIGABRT, probe_crashed);
    signal(SIGFPE, probe_crashed);
}

struct probe_args {
    int hidapi;
    const char *path;
    int wait_seconds;
};

/* 0, or 2 (the probe's exit code for a usage error) after saying how it is used. */
static int probe_parse_args(int argc, char **argv, const char *name, struct probe_args *args) {
    const char *hidapi = NULL;
    args->path = NULL;
    args->wait_seconds = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--hidapi") == 0) hidapi = argv[i + 1];
        else if (strcmp(argv[i], "--path") == 0) args->path = argv[i + 1];
        else if (strcmp(argv[i], "--wait") == 0) args->wait_seconds = atoi(argv[i + 1]);
    }
    if (!hidapi || !args->path || (strcmp(hidapi, "on") && strcmp(hidapi, "off"))) {
        fprintf(stderr, "usage: %s --hidapi on|off --path NODE [--wait SECONDS]\n", name);
        return 2;
    }
    args->hidapi = strcmp(hidapi, "on") == 0;
    probe_report_crashes();
    return 0;
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

/* One probe's SDL calls on its opened pad; the int ones answer 0 on success, -1 on failure. */
struct probe_commands {
    void (*info)(void *pad);
    void (*state)(void *pad);
    int (*rumble)(void *pad, unsigned low, unsigned high, unsigned ms);
    int (*triggers)(void *pad, unsigned left, unsigned right, unsigned ms);
    int (*led)(void *pad, unsigned red, unsigned green, unsigned blue);
    int (*player)(void *pad, int index);
    int (*effect)(void *pad, const unsigned char *bytes, int count);
    /* Lets SDL's HIDAPI drivers write what a command queued before the next one. */
    void (*update)(void);
    const char *(*error)(void);
};

static void probe_result(const struct probe_commands *commands, const char *command, int rc) {
    printf("{\"command\":\"%s\",\"rc\":%d", command, rc);
    if (rc != 0) { printf(","); print_string("error", commands->error(), 0); }
    printf("}\n");
}

/* Answers stdin's commands until quit or its end. */
static void probe_run(void *pad, const struct probe_commands *commands) {
    char line[512];
    setvbuf(stdout, NULL, _IOLBF, 0);
    commands->info(pad);
    while (fgets(line, sizeof line, stdin)) {
        unsigned a = 0, b = 0, c = 0;
        int n = 0;
        char hex[256];
        if (strncmp(line, "quit", 4) == 0) break;
        else if (strncmp(line, "info", 4) == 0) commands->info(pad);
        else if (strncmp(line, "state", 5) == 0) commands->state(pad);
        else if (sscanf(line, "rumble %u %u %u", &a, &b, &c) == 3) probe_result(commands, "rumble", commands->rumble(pad, a, b, c));
        else if (sscanf(line, "triggers %u %u %u", &a, &b, &c) == 3) probe_result(commands, "triggers", commands->triggers(pad, a, b, c));
        else if (sscanf(line, "led %u %u %u", &a, &b, &c) == 3) probe_result(commands, "led", commands->led(pad, a, b, c));
        else if (sscanf(line, "player %d", &n) == 1) probe_result(commands, "player", commands->player(pad, n));
        else if (sscanf(line, "effect %255s", hex) == 1) {
            unsigned char bytes[128];
            int count = 0;
            for (const char *h = hex; h[0] && h[1] && count < (int)sizeof bytes; h += 2) {
                unsigned byte;
                if (sscanf(h, "%2x", &byte) != 1) break;
                bytes[count++] = (unsigned char)byte;
            }
            probe_result(commands, "effect", commands->effect(pad, bytes, count));
        } else { printf("{\"error\":\"unknown command\"}\n"); }
        commands->update();
    }
}
