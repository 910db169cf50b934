/*
 * The engine of benchmarks/clock_fairness.py: bots/c/bot.c (its rules, its moves, its
 * answers to every command, `query` included), except that it answers `go movetime N`
 * exactly SLACK_US microseconds before its deadline, timed from when it read the `go`
 * line: it chooses its move at once, then sleeps until N ms - SLACK_US after that read
 * (an absolute CLOCK_MONOTONIC deadline, so its own work is not added to the wait).
 *
 * Every game is the same game, whichever host plays it and in whichever of its processes:
 * bot.c's random choices continue from game to game in one process, so after each
 * `uginewgame` this engine feeds itself `setoption name Seed value S` again (S: the last
 * Seed it was given, 1 by default) before its next command.
 *
 * It reports its own time in the line before `bestmove`: `info depth 1 score cp 0 time
 * MS nodes US`, US being the microseconds from reading `go` to writing `bestmove` by its
 * own clock. guti stores each move's search fields, and `nodes` is the one that keeps a
 * whole number of that size, so the benchmark reads what the host measured minus what
 * the engine spent, per move, to the microsecond.
 *
 * Built by the benchmark into a temporary folder, once per slack:
 *     gcc -O2 -DSLACK_US=3000 -o slack3 benchmarks/slack_engine.c
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef SLACK_US
#define SLACK_US 3000
#endif

static struct timespec line_began; /* when the line being read began to be read */
static int at_line_start = 1;
static char line_head[256];        /* the start of the line being read */
static size_t head_len;
static struct timespec go_read;    /* when the last `go movetime` line was read */
static char seed[32] = "1";        /* the last Seed option given */
static char inject[64];            /* a line fed to bot.c before the next one read */
static size_t inject_at, inject_len;
static long go_movetime_ms = -1;   /* its movetime; -1: no such go waits for its answer */

static long us_between(const struct timespec *a, const struct timespec *b)
{
    return (long)(b->tv_sec - a->tv_sec) * 1000000L + (b->tv_nsec - a->tv_nsec) / 1000L;
}

/* A whole line was read: remember a `go movetime N` and when it came, and the Seed; after
 * `uginewgame`, have the Seed set again. */
static void line_read(void)
{
    line_head[head_len] = 0;
    if (strncmp(line_head, "setoption name Seed value ", 26) == 0) {
        snprintf(seed, sizeof seed, "%.20s", line_head + 26);
    } else if (strcmp(line_head, "uginewgame") == 0) {
        inject_len = (size_t)snprintf(inject, sizeof inject, "setoption name Seed value %s\n",
                                      seed);
        inject_at = 0;
    }
    go_movetime_ms = -1;
    if (strncmp(line_head, "go ", 3) != 0) return;
    const char *at = strstr(line_head, " movetime ");
    if (at == NULL) return;
    go_movetime_ms = strtol(at + 10, NULL, 10);
    go_read = line_began;
}

/* bot.c's getchar: the same characters (and a line to inject, first), the time each line
 * began to be read noted. */
static int slack_getchar(void)
{
    if (inject_at < inject_len) return (unsigned char)inject[inject_at++];
    int ch = getchar();
    if (ch == EOF) return ch;
    if (at_line_start) {
        clock_gettime(CLOCK_MONOTONIC, &line_began);
        at_line_start = 0;
        head_len = 0;
    }
    if (ch == '\n') {
        at_line_start = 1;
        line_read();
    } else if (head_len + 1 < sizeof line_head) {
        line_head[head_len++] = (char)ch;
    }
    return ch;
}

/* bot.c's vprintf: a `bestmove` answering a `go movetime` waits for its moment and is
 * preceded by the engine's own time; everything else is written as it is. */
static int slack_vprintf(const char *fmt, va_list ap)
{
    if (strncmp(fmt, "bestmove", 8) == 0 && go_movetime_ms >= 0) {
        long wait_us = go_movetime_ms * 1000L - SLACK_US;
        struct timespec until = go_read;
        until.tv_sec += wait_us / 1000000L;
        until.tv_nsec += (wait_us % 1000000L) * 1000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec += 1;
            until.tv_nsec -= 1000000000L;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) != 0) {
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long spent = us_between(&go_read, &now);
        printf("info depth 1 score cp 0 time %ld nodes %ld\n", spent / 1000L, spent);
        go_movetime_ms = -1;
    }
    return vprintf(fmt, ap);
}

#define getchar slack_getchar
#define vprintf slack_vprintf
#include "../bots/c/bot.c"
