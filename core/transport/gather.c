/* SPDX-License-Identifier: BSD-2-Clause */
/* gather.c - submit_gather for transports that copy datagrams anyway (rdps_transport.h). */
#include "rdps_transport.h"

#include <string.h>

#include "rdps_error.h"

int rdps__transport_gather_by_copy(struct rdps_transport *t, struct rdps_tx_buf *buf,
                                   uint32_t hdr_len, struct rdps_tx_mem *m, size_t offset,
                                   uint32_t len, const struct rdps_dest *const *dests,
                                   unsigned ndest, uint64_t cookie)
{
    int rc = 0;
    if (m == NULL || offset > m->len || len > m->len - offset || cookie <= m->submitted)
        rc = rdps__set_err(RDPS_EINVAL,
                           "submit_gather: %u bytes at %zu outside the region, or a "
                           "cookie not above the last",
                           len, offset);
    else if (buf == NULL || hdr_len > buf->capacity || len > buf->capacity - hdr_len)
        rc = rdps__set_err(RDPS_EMSGSIZE, "submit_gather: a datagram of %u + %u bytes above %u",
                           hdr_len, len, buf != NULL ? buf->capacity : 0);
    if (rc < 0) {
        if (buf != NULL)
            t->ops->abort(t, buf); /* the buffer is the transport's, as with submit */
        return rc;
    }
    memcpy(buf->data + hdr_len, m->addr + offset, len);
    rc = t->ops->submit(t, buf, hdr_len + len, dests, ndest);
    if (rc == 0)
        rdps__tx_mem_skip(m, cookie); /* copied: the region is done with */
    return rc;
}
