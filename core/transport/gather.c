/* SPDX-License-Identifier: BSD-2-Clause */
/* gather.c - for transports that copy datagrams anyway (rdps_transport.h): submit_gather by copy
 * and the list of registered regions. */
#include "rdps_transport.h"

#include <stdlib.h>
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

int rdps__tx_mem_list_add(struct rdps_transport *t, struct rdps_tx_mem **list, void *addr,
                          size_t len, struct rdps_tx_mem **out)
{
    if (out != NULL)
        *out = NULL;
    if (out == NULL || addr == NULL || len == 0)
        return rdps__set_err(RDPS_EINVAL, "mem_register: no memory (%zu bytes) or no out pointer",
                             len);
    struct rdps_tx_mem *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return rdps__set_err(RDPS_ENOMEM, "mem_register: out of memory");
    m->addr = addr;
    m->len = len;
    m->owner = t;
    m->next = *list;
    *list = m;
    *out = m;
    return 0;
}

bool rdps__tx_mem_list_remove(struct rdps_tx_mem **list, struct rdps_tx_mem *m)
{
    for (struct rdps_tx_mem **link = list; *link != NULL; link = &(*link)->next) {
        if (*link == m) {
            *link = m->next;
            free(m);
            return true;
        }
    }
    return false;
}
