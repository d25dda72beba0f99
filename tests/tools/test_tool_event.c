/* SPDX-License-Identifier: BSD-2-Clause */
/* test_tool_event.c - the line the tools print for an event names it and its reason as librdps
 * does (tools/common/tool_event.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "tool_event.h"

static void expect(const rdps_event *ev, const char *want)
{
    char line[160];
    assert_string_equal(tool_event_text(ev, line, sizeof(line)), want);
}

static void test_event_lines(void **state)
{
    (void)state;
    rdps_event loss = {.type = RDPS_EVENT_LOSS,
                       .session_id = 0x1a2b3c4d,
                       .first_seq = 10,
                       .count = 10,
                       .reason = RDPS_LOSS_BELOW_RING};
    expect(&loss, "loss: session 1a2b3c4d sequences 10..19 unrecoverable (below_ring)");
    loss.reason = RDPS_LOSS_SESSION_DROPPED;
    expect(&loss, "loss: session 1a2b3c4d sequences 10..19 unrecoverable (session_dropped)");
    rdps_event gap = {.type = RDPS_EVENT_GAP, .session_id = 7, .first_seq = 5, .count = 1};
    expect(&gap, "gap: session 00000007 sequences 5..5 missing");
    rdps_event evicted = {.type = RDPS_EVENT_RECEIVER_EVICTED,
                          .receiver_id = 0x0a1b2c3d,
                          .source = {.qpn = 0x12},
                          .reason = RDPS_EVICT_LAGGED};
    expect(&evicted, "receiver_evicted: receiver 0a1b2c3d (qpn 0x12) (lagged)");
    evicted.type = RDPS_EVENT_RECEIVER_TIMED_OUT;
    evicted.reason = 0;
    expect(&evicted, "receiver_timed_out: receiver 0a1b2c3d (qpn 0x12)");
    rdps_event gone = {.type = RDPS_EVENT_SUBSCRIBER_GONE,
                       .session_id = 0x5e6f7a8b,
                       .source = {.qpn = 0x12},
                       .reason = RDPS_GONE_TIMED_OUT};
    expect(&gone, "subscriber_gone: subscriber 5e6f7a8b (qpn 0x12) (timed_out)");
    gone.type = RDPS_EVENT_PUBLISHER_GONE;
    gone.reason = RDPS_GONE_LEFT;
    expect(&gone, "publisher_gone: session 5e6f7a8b (qpn 0x12) (left)");
    rdps_event qp = {.type = RDPS_EVENT_QP_RECOVERED, .count = 3};
    expect(&qp, "qp_recovered: 3 datagrams sent meanwhile lost");
    rdps_event odd = {.type = (rdps_event_type)1000, .session_id = 1};
    expect(&odd, "unknown: session 00000001");
    char small[8];
    assert_string_equal(tool_event_text(&loss, small, sizeof(small)), "loss: s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
