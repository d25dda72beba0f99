/* SPDX-License-Identifier: BSD-2-Clause */
/* event.c - names of the public event types and of the reasons events carry (rdps.h). */
#include <rdps/rdps.h>

#include <stddef.h>

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Indexed by value; a NULL hole is a value the enum does not have. */
static const char *const event_names[] = {
    [RDPS_EVENT_GAP] = "gap",
    [RDPS_EVENT_PUBLISHER_SEEN] = "publisher_seen",
    [RDPS_EVENT_PUBLISHER_GONE] = "publisher_gone",
    [RDPS_EVENT_QP_RECOVERED] = "qp_recovered",
    [RDPS_EVENT_RECEIVER_EVICTED] = "receiver_evicted",
    [RDPS_EVENT_RECEIVER_RESUMED] = "receiver_resumed",
    [RDPS_EVENT_RECEIVER_TIMED_OUT] = "receiver_timed_out",
    [RDPS_EVENT_LOSS] = "loss",
    [RDPS_EVENT_SUBSCRIBER_SEEN] = "subscriber_seen",
    [RDPS_EVENT_SUBSCRIBER_GONE] = "subscriber_gone",
    [RDPS_EVENT_TOPIC_COLLISION] = "topic_collision",
    [RDPS_EVENT_UNICAST_FALLBACK] = "unicast_fallback",
};

static const char *const loss_reason_names[] = {
    [RDPS_LOSS_BELOW_RING] = "below_ring",
    [RDPS_LOSS_NAK_RETRIES] = "nak_retries",
    [RDPS_LOSS_DEADLINE] = "deadline",
    [RDPS_LOSS_PARTIAL_MESSAGE] = "partial_message",
    [RDPS_LOSS_TOO_LARGE] = "too_large",
    [RDPS_LOSS_SESSION_DROPPED] = "session_dropped",
    [RDPS_LOSS_NOT_IN_RECORDING] = "not_in_recording",
};

static const char *const evict_reason_names[] = {
    [RDPS_EVICT_LAGGED] = "lagged",
    [RDPS_EVICT_STALLED] = "stalled",
};

static const char *const gone_reason_names[] = {
    [RDPS_GONE_LEFT] = "left",
    [RDPS_GONE_TIMED_OUT] = "timed_out",
};

static const char *const fallback_reason_names[] = {
    [RDPS_FALLBACK_JOIN_FAILED] = "join_failed",
    [RDPS_FALLBACK_JOIN_TIMED_OUT] = "join_timed_out",
    [RDPS_FALLBACK_NO_MULTICAST] = "no_multicast",
};

static const char *lookup(const char *const *names, size_t count, int value)
{
    if (value < 0 || (size_t)value >= count || names[value] == NULL)
        return "unknown";
    return names[value];
}

const char *rdps_event_name(rdps_event_type type)
{
    return lookup(event_names, COUNT_OF(event_names), (int)type);
}

const char *rdps_event_reason_name(const rdps_event *ev)
{
    if (ev == NULL)
        return "";
    switch (ev->type) {
    case RDPS_EVENT_LOSS:
        return lookup(loss_reason_names, COUNT_OF(loss_reason_names), ev->reason);
    case RDPS_EVENT_RECEIVER_EVICTED:
        return lookup(evict_reason_names, COUNT_OF(evict_reason_names), ev->reason);
    case RDPS_EVENT_PUBLISHER_GONE:
    case RDPS_EVENT_SUBSCRIBER_GONE:
        return lookup(gone_reason_names, COUNT_OF(gone_reason_names), ev->reason);
    case RDPS_EVENT_UNICAST_FALLBACK:
        return lookup(fallback_reason_names, COUNT_OF(fallback_reason_names), ev->reason);
    default:
        return "";
    }
}
