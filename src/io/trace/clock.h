/* The trace's clock: seconds since IO_TRACE_EPOCH by CLOCK_REALTIME (so
 * ranks' times compare), read on every traced request. Counting from a
 * recent fixed date, not 1970, keeps a double's resolution at a few
 * nanoseconds (about 4 ns in 2026, 15 ns in 2030; from 1970 it is 240 ns,
 * a quarter of a page-cache request); the document adds the epoch back.
 *
 * Where the processor's time-stamp counter is invariant (x86-64 with
 * CPUID 0x80000007 EDX bit 8: it ticks at one rate in every power state
 * and on every core) and the kernel keeps time by it (its clocksource is
 * `tsc`: it found the cores' counters in step), a reading is one `rdtsc`
 * and a multiply-add: the counter is calibrated once per process against
 * CLOCK_MONOTONIC (two readings 5 ms apart) and anchored to CLOCK_REALTIME. Elsewhere, or with
 * $PARIO_TRACE_CLOCK=system, a reading is clock_gettime(CLOCK_REALTIME).
 *
 * The calibration is process-wide (the folder's own, like the registry of
 * traced files): made by io_trace_clock_start before the first traced file
 * exists, read-only afterwards. */
#ifndef PARIO_IO_TRACE_CLOCK_H
#define PARIO_IO_TRACE_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* 2026-01-01 00:00:00 UTC in seconds since 1970. */
#define IO_TRACE_EPOCH 1767225600

/* The calibration: now = origin + (ticks - tick0) * seconds_per_tick. */
typedef struct io_trace_clock_cal {
    int use_tsc;
    uint64_t tick0;
    double origin;           /* CLOCK_REALTIME at tick0, seconds since IO_TRACE_EPOCH */
    double seconds_per_tick; /* measured against CLOCK_MONOTONIC */
} io_trace_clock_cal;

extern io_trace_clock_cal io_trace_cal;

/* Calibrates the clock once per process (thread-safe; later calls return
 * at once). Called when a file starts being traced. */
void io_trace_clock_start(void);

/* Measures a calibration into cal: the time-stamp counter when want_tsc and
 * it is invariant, else the system clock. Returns cal->use_tsc. */
int io_trace_clock_calibrate(io_trace_clock_cal *cal, int want_tsc);

/* CLOCK_REALTIME in seconds since IO_TRACE_EPOCH: the fallback, and the
 * reference. */
double io_trace_system_now(void);

/* Seconds since IO_TRACE_EPOCH by calibration cal. */
static inline double io_trace_clock_read(const io_trace_clock_cal *cal) {
#if defined(__x86_64__)
    if (__builtin_expect(cal->use_tsc, 1))
        return cal->origin + (double)(int64_t)(__rdtsc() - cal->tick0) * cal->seconds_per_tick;
#endif
    return io_trace_system_now();
}

/* Seconds since IO_TRACE_EPOCH, by the process's calibration. */
static inline double io_trace_now(void) {
    return io_trace_clock_read(&io_trace_cal);
}

/* Whether the process's readings come from the time-stamp counter. */
static inline int io_trace_clock_is_tsc(void) {
    return io_trace_cal.use_tsc;
}

#endif
