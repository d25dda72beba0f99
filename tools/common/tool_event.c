/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_event.c - the one line the rdps tools print for an rdps_event. */
#include "tool_event.h"

#include <inttypes.h>
#include <stdio.h>

const char *tool_event_text(const rdps_event *ev, char *buf, size_t len)
{
    char what[96];
    uint32_t last = ev->first_seq + (ev->count ? ev->count - 1 : 0);
    switch (ev->type) {
    case RDPS_EVENT_GAP:
    case RDPS_EVENT_LOSS:
        snprintf(what, sizeof(what), "session %08" PRIx32 " sequences %" PRIu32 "..%" PRIu32 "%s",
                 ev->session_id, ev->first_seq, last,
                 ev->type == RDPS_EVENT_LOSS ? " unrecoverable" : " missing");
        break;
    case RDPS_EVENT_PUBLISHER_SEEN:
    case RDPS_EVENT_PUBLISHER_GONE:
        snprintf(what, sizeof(what), "session %08" PRIx32 " (qpn 0x%" PRIx32 ")", ev->session_id,
                 ev->source.qpn);
        break;
    case RDPS_EVENT_QP_RECOVERED:
        snprintf(what, sizeof(what), "%" PRIu32 " datagrams sent meanwhile lost", ev->count);
        break;
    case RDPS_EVENT_RECEIVER_EVICTED:
    case RDPS_EVENT_RECEIVER_RESUMED:
    case RDPS_EVENT_RECEIVER_TIMED_OUT:
        snprintf(what, sizeof(what), "receiver %08" PRIx32 " (qpn 0x%" PRIx32 ")", ev->receiver_id,
                 ev->source.qpn);
        break;
    case RDPS_EVENT_SUBSCRIBER_SEEN:
    case RDPS_EVENT_SUBSCRIBER_GONE:
        snprintf(what, sizeof(what), "subscriber %08" PRIx32 " (qpn 0x%" PRIx32 ")", ev->session_id,
                 ev->source.qpn);
        break;
    default:
        snprintf(what, sizeof(what), "session %08" PRIx32, ev->session_id);
        break;
    }
    const char *reason = rdps_event_reason_name(ev);
    snprintf(buf, len, "%s: %s%s%s%s", rdps_event_name(ev->type), what, *reason ? " (" : "", reason,
             *reason ? ")" : "");
    return buf;
}
