// SPDX-License-Identifier: GPL-2.0
/*
 * The one place the tracepoints are instantiated.
 */

#define CREATE_TRACE_POINTS
#include "rxe_trace.h"
