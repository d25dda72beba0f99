/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_event.h - the one line the rdps tools print for an rdps_event. */
#ifndef RDPS_TOOLS_EVENT_H
#define RDPS_TOOLS_EVENT_H

#include <stddef.h>

#include <rdps/rdps.h>

/*
 * Writes "NAME: WHAT[ (REASON)]" into buf (always terminated; cut at len) and returns buf.
 * NAME and REASON are rdps_event_name() and rdps_event_reason_name(); WHAT names what the event
 * is about with the fields its type sets, e.g.
 *   "loss: session 1a2b3c4d sequences 10..19 unrecoverable (below_ring)"
 *   "receiver_evicted: receiver 0a1b2c3d (qpn 0x12) (lagged)"
 *   "subscriber_gone: subscriber 5e6f7a8b (qpn 0x12) (timed_out)"
 */
const char *tool_event_text(const rdps_event *ev, char *buf, size_t len);

#endif /* RDPS_TOOLS_EVENT_H */
