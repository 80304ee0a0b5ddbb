/* Calibrating the trace's clock (see clock.h). */
#include "io/trace/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

io_trace_clock_cal io_trace_cal;
static pthread_once_t calibrated = PTHREAD_ONCE_INIT;

/* Sanity range of the counter's rate: 100 MHz to 100 GHz. */
#define TSC_HZ_MIN 1e8
#define TSC_HZ_MAX 1e11
/* How far apart the two calibration readings are. */
#define CALIBRATION_NS 5000000L
/* Readings per calibration point; the tightest is kept. */
#define CALIBRATION_TRIES 7

/* Seconds of ts since `epoch` (whole seconds subtracted first, exactly). */
static double seconds(const struct timespec *ts, time_t epoch) {
    return (double)(ts->tv_sec - epoch) + 1e-9 * (double)ts->tv_nsec;
}

double io_trace_system_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return seconds(&ts, IO_TRACE_EPOCH);
}

#if defined(__x86_64__)
/* Whether the counter is invariant (CPUID 0x80000007, EDX bit 8). */
static int tsc_invariant(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return 0;
    return (d >> 8) & 1;
}

/* Whether the kernel keeps time by the counter (so it found it in step
 * across cores); unknown (no sysfs) counts as yes, CPUID deciding. */
static int kernel_uses_tsc(void) {
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 1;
    char name[32] = "";
    int ok = fgets(name, sizeof name, f) != NULL && strncmp(name, "tsc", 3) == 0 &&
             (name[3] == '\n' || name[3] == '\0');
    fclose(f);
    return ok;
}

/* One point: the system clock `id` (seconds since `epoch`) and the
 * counter read at the same moment (the middle of the tightest of a few counter brackets). */
static void clock_point(clockid_t id, time_t epoch, uint64_t *tick, double *sec) {
    uint64_t best = UINT64_MAX;
    *tick = 0;
    *sec = 0;
    for (int i = 0; i < CALIBRATION_TRIES; i++) {
        struct timespec ts;
        uint64_t a = __rdtsc();
        clock_gettime(id, &ts);
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *sec = seconds(&ts, epoch);
        }
    }
}

/* The counter's seconds per tick against CLOCK_MONOTONIC; 0 when the
 * measured rate is not plausible. */
static double measure_tick(void) {
    uint64_t t1, t2;
    double s1, s2;
    clock_point(CLOCK_MONOTONIC, 0, &t1, &s1);
    struct timespec pause = {0, CALIBRATION_NS};
    while (nanosleep(&pause, &pause) != 0) {
    }
    clock_point(CLOCK_MONOTONIC, 0, &t2, &s2);
    if (t2 <= t1 || s2 <= s1)
        return 0;
    double hz = (double)(t2 - t1) / (s2 - s1);
    return hz >= TSC_HZ_MIN && hz <= TSC_HZ_MAX ? 1.0 / hz : 0;
}
#endif

int io_trace_clock_calibrate(io_trace_clock_cal *cal, int want_tsc) {
    *cal = (io_trace_clock_cal){0};
#if defined(__x86_64__)
    if (want_tsc && tsc_invariant() && kernel_uses_tsc())
        cal->seconds_per_tick = measure_tick();
    if (cal->seconds_per_tick > 0) {
        clock_point(CLOCK_REALTIME, IO_TRACE_EPOCH, &cal->tick0, &cal->origin);
        cal->use_tsc = 1;
    }
#else
    (void)want_tsc;
#endif
    return cal->use_tsc;
}

/* $PARIO_TRACE_CLOCK=system asks for clock_gettime. */
static int tsc_wanted(void) {
    const char *env = getenv("PARIO_TRACE_CLOCK");
    return !env || strcmp(env, "system") != 0;
}

static void calibrate(void) {
    io_trace_clock_cal cal;
    io_trace_clock_calibrate(&cal, tsc_wanted());
    io_trace_cal = cal;
}

void io_trace_clock_start(void) {
    pthread_once(&calibrated, calibrate);
}
