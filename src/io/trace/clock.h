/* The trace's clock: seconds since the epoch (CLOCK_REALTIME's scale, so
 * ranks' times compare), read on every traced request.
 *
 * Where the processor's time-stamp counter is invariant (x86-64 with
 * CPUID 0x80000007 EDX bit 8: it ticks at one rate in every power state
 * and on every core), a reading is one `rdtsc` and a multiply-add: the
 * counter is calibrated once per process against CLOCK_MONOTONIC (two
 * readings 2 ms apart) and anchored to CLOCK_REALTIME. Elsewhere, or with
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

/* The calibration: now = origin + (ticks - tick0) * seconds_per_tick. */
typedef struct io_trace_clock_cal {
    int use_tsc;
    uint64_t tick0;
    double origin;           /* CLOCK_REALTIME at tick0, seconds */
    double seconds_per_tick; /* measured against CLOCK_MONOTONIC */
} io_trace_clock_cal;

extern io_trace_clock_cal io_trace_cal;

/* Calibrates the clock once per process (thread-safe; later calls return
 * at once). Called when a file starts being traced. */
void io_trace_clock_start(void);

/* CLOCK_REALTIME in seconds: the fallback, and the reference. */
double io_trace_system_now(void);

/* Seconds since the epoch. */
static inline double io_trace_now(void) {
#if defined(__x86_64__)
    if (__builtin_expect(io_trace_cal.use_tsc, 1))
        return io_trace_cal.origin +
               (double)(int64_t)(__rdtsc() - io_trace_cal.tick0) * io_trace_cal.seconds_per_tick;
#endif
    return io_trace_system_now();
}

/* Whether readings come from the time-stamp counter (for the document). */
static inline int io_trace_clock_is_tsc(void) {
    return io_trace_cal.use_tsc;
}

#endif
