/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_loss.h - reliable streams' loss events and their message counts (rdps_rel_loss.c; the
 * model is rdps_rel_recv.h's "Messages"). Called by rdps_rel_recv.c only. */
#ifndef RDPS_PROTO_REL_LOSS_H
#define RDPS_PROTO_REL_LOSS_H

#include <stdbool.h>
#include <stdint.h>

#include "rdps_reasm.h"

/* Where a loss's messages begin and end, when the caller knows (else: the next ordinal, and the
 * ordinal at the run's end as ordinal_at finds it). */
struct rdps_rel_loss_msgs {
    bool has_start, has_end;
    uint32_t start, end;
};

/* Loss [first, first + count) of stream si, for reason (RDPS__LOSS_NONE: before the join, no
 * event); its messages from the next ordinal to the end m or the stream knows. */
void rdps__rel_emit_loss(struct rdps_reasm *r, int32_t si, uint32_t first, uint32_t count,
                         rdps_loss_reason reason, const struct rdps_rel_loss_msgs *m);
/* Messages before `ord` are delivered or lost: the waiting loss (if any) ends there. */
void rdps__rel_messages_reach(struct rdps_reasm *r, int32_t si, uint32_t ord);
/* The waiting loss's end, if this receiver now knows it (the consumed point's ordinal). */
void rdps__rel_loss_try_end(struct rdps_reasm *r, int32_t si);

#endif /* RDPS_PROTO_REL_LOSS_H */
