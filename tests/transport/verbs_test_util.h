/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_test_util.h - helpers shared by the rxe transport tests: device check, direct AHs, waiting.
 */
#ifndef RDPS_VERBS_TEST_UTIL_H
#define RDPS_VERBS_TEST_UTIL_H

#include "rdps_clock.h"
#include "rdps_verbs_transport.h"

#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VT_SKIP 77

/* true when at least one RDMA device exists (tests exit VT_SKIP otherwise). */
static inline int vt_have_device(void)
{
    int num = 0;
    struct ibv_device **list = ibv_get_device_list(&num);
    if (list != NULL)
        ibv_free_device_list(list);
    return num > 0;
}

static inline uint64_t vt_now_ms(void)
{
    return rdps__clock_monotonic_ns() / 1000000u;
}

static inline void vt_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000u, (long)(ms % 1000u) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The device the harness set up, else the first ACTIVE port. */
static inline const char *vt_device(void)
{
    const char *dev = getenv("RDPS_VM_DEV");
    return dev != NULL && dev[0] != '\0' ? dev : NULL;
}

/*
 * A destination for `to`'s QP built straight from its GID, on `from`'s PD:
 * the transport tests must not depend on addr/.
 */
static inline struct ibv_ah *vt_make_ah(const struct rdps_verbs_info *from,
                                        const struct rdps_verbs_info *to)
{
    struct ibv_ah_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.is_global = 1;
    attr.grh.dgid = to->gid;
    attr.grh.sgid_index = from->gid_index;
    attr.grh.hop_limit = 64;
    attr.port_num = from->port_num;
    return ibv_create_ah(from->pd, &attr);
}

#endif /* RDPS_VERBS_TEST_UTIL_H */
