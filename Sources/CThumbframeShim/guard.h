/* The stop a long computation checks between its steps: a deadline and a flag (SIGINT/SIGTERM).
 * Shared by shim.c and jpeg.c; not part of the module's interface. */
#ifndef TF_GUARD_H
#define TF_GUARD_H

#include <glib.h>

typedef struct {
    gint64 deadline; /* g_get_monotonic_time() microseconds; 0: none */
    const int *stop;
    int reason; /* a TFStopReason once it said stop */
} TFGuard;

/* Whether the guard says stop now (and why, in guard->reason). */
int tf_guard_stops(TFGuard *guard);

#endif
