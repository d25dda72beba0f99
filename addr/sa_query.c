/* SPDX-License-Identifier: BSD-2-Clause */
/* sa_query.c - SubnAdmGetTable(MCMemberRecord) over libibumad; RoCE ports have no SA and say so. */
#include "rdps_clock.h"
#include "rdps_addr.h"

#include <errno.h>
#include <infiniband/umad.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdps_error.h"

#define SA_QP          1
#define SA_QKEY        0x80010000u /* the well-known GSI Q_Key (IBA 13.5.1) */
#define SA_SEND_RETRY  2
#define SA_RECV_BUFFER (64 * 1024) /* a reassembled RMPP table; grown on demand */

/* Link layer and SM address of the port, through verbs (umad has no link layer on every version).
 */
static int port_link_layer(const char *device_name, uint8_t port_num, int *link_layer,
                           enum ibv_port_state *state)
{
    struct ibv_device **list;
    int n = 0, err = RDPS_ENODEV;

    list = ibv_get_device_list(&n);
    if (list == NULL)
        return rdps__set_err(rdps__errno_code(errno), "ibv_get_device_list: %s", strerror(errno));
    for (int i = 0; i < n; i++) {
        if (strcmp(ibv_get_device_name(list[i]), device_name) != 0)
            continue;
        struct ibv_context *ctx = ibv_open_device(list[i]);
        if (ctx == NULL) {
            err = rdps__set_err(rdps__errno_code(errno), "ibv_open_device %s: %s", device_name,
                                strerror(errno));
            break;
        }
        struct ibv_port_attr attr;
        int rc = ibv_query_port(ctx, port_num, &attr);
        ibv_close_device(ctx);
        if (rc != 0) {
            err = rdps__set_err(rdps__errno_code(rc), "ibv_query_port %s/%u: %s", device_name,
                                port_num, strerror(rc));
            break;
        }
        *link_layer = attr.link_layer;
        *state = attr.state;
        err = 0;
        break;
    }
    ibv_free_device_list(list);
    if (err == RDPS_ENODEV)
        return rdps__set_err(err, "RDMA device %s not found", device_name);
    return err;
}

static uint64_t clock_ms(void)
{
    return rdps__clock_monotonic_ms();
}

/* Waits for the response to `tid`, skipping strays; returns its MAD length or an error. */
static int receive_response(int fd, int agent, uint64_t tid, uint64_t deadline, void **buf,
                            size_t *cap, uint8_t **mad_out)
{
    for (;;) {
        uint64_t now = clock_ms();
        if (now >= deadline)
            return rdps__set_err(RDPS_ETIMEDOUT, "subnet administrator did not answer in time");
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int rc = poll(&pfd, 1, (int)(deadline - now));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return rdps__set_err(rdps__errno_code(errno), "poll(umad): %s", strerror(errno));
        if (rc == 0)
            continue;
        int len = (int)(*cap - (size_t)umad_size());
        int got = umad_recv(fd, *buf, &len, 0);
        if (got == -ENOSPC) {
            /* The reassembled table is larger: len says how much; read it again. */
            size_t need = (size_t)umad_size() + (size_t)len;
            void *bigger = realloc(*buf, need);
            if (bigger == NULL)
                return rdps__set_err(RDPS_ENOMEM, "SA response of %d bytes: out of memory", len);
            *buf = bigger;
            *cap = need;
            continue;
        }
        if (got < 0) {
            if (got == -EWOULDBLOCK || got == -EAGAIN || got == -EINTR)
                continue;
            return rdps__set_err(rdps__errno_code(got), "umad_recv: %s", strerror(-got));
        }
        if (got != agent)
            continue;
        int status = umad_status(*buf);
        if (status == ETIMEDOUT)
            return rdps__set_err(RDPS_ETIMEDOUT,
                                 "subnet administrator did not answer (MAD send timed out)");
        if (status != 0)
            return rdps__set_err(rdps__errno_code(status), "SA query failed: %s", strerror(status));
        uint8_t *mad = umad_get_mad(*buf);
        /* A stray answer to some earlier query of this agent is skipped. */
        if (len >= RDPS_MAD_HDR_SIZE) {
            struct rdps_mad_hdr hdr;
            rdps__mad_hdr_decode(mad, &hdr);
            if ((uint32_t)hdr.tid != (uint32_t)tid)
                continue;
        }
        *mad_out = mad;
        return len;
    }
}

int rdps__sa_query_mcmember(const char *device_name, uint8_t port_num, const uint8_t mgid[16],
                            uint32_t timeout_ms, struct rdps_sa_mcmember *out, size_t max)
{
    int link_layer = 0;
    enum ibv_port_state state = IBV_PORT_NOP;
    struct umad_port port;
    int fd = -1, agent = -1, err;
    void *send_buf = NULL, *recv_buf = NULL;
    size_t recv_cap = 0;

    if (device_name == NULL || port_num == 0 || (out == NULL && max != 0))
        return rdps__set_err(RDPS_EINVAL, "sa_query_mcmember: device name and port are required");
    if (timeout_ms == 0)
        timeout_ms = 2000;
    err = port_link_layer(device_name, port_num, &link_layer, &state);
    if (err < 0)
        return rdps__prepend_err(err, "SA query: ");
    if (link_layer == IBV_LINK_LAYER_ETHERNET)
        return rdps__set_err(RDPS_ENOTSUP,
                             "%s port %u: RoCE/Ethernet link layer has no subnet administrator "
                             "(multicast groups are kept by the switches/IGMP, not an SA)",
                             device_name, port_num);
    if (state != IBV_PORT_ACTIVE)
        return rdps__set_err(RDPS_ENETDOWN, "%s port %u is not ACTIVE: no SA to ask", device_name,
                             port_num);

    if (umad_init() < 0)
        return rdps__set_err(RDPS_ENODEV, "umad_init failed (is ib_umad loaded?)");
    memset(&port, 0, sizeof(port));
    err = umad_get_port(device_name, port_num, &port);
    if (err < 0) {
        err = rdps__set_err(rdps__errno_code(err), "umad_get_port %s/%u: %s (is ib_umad loaded?)",
                            device_name, port_num, strerror(-err));
        goto out_done;
    }
    if (port.sm_lid == 0) {
        err = rdps__set_err(RDPS_ENETUNREACH, "%s port %u: no subnet manager (SM LID is 0)",
                            device_name, port_num);
        goto out_port;
    }
    fd = umad_open_port(device_name, port_num);
    if (fd < 0) {
        err = rdps__set_err(rdps__errno_code(fd), "umad_open_port %s/%u: %s%s", device_name,
                            port_num, strerror(-fd),
                            fd == -EACCES ? " (needs access to /dev/infiniband/umad*)" : "");
        goto out_port;
    }
    /* RMPP version 1: the kernel reassembles multi-segment tables for us. */
    agent = umad_register(fd, RDPS_MAD_CLASS_SUBN_ADM, RDPS_MAD_SA_CLASS_VERSION,
                          RDPS_MAD_RMPP_VERSION, NULL);
    if (agent < 0) {
        err = rdps__set_err(rdps__errno_code(agent), "umad_register (SA class): %s",
                            strerror(-agent));
        goto out_fd;
    }
    send_buf = umad_alloc(1, (size_t)umad_size() + RDPS_MAD_SIZE);
    recv_cap = (size_t)umad_size() + SA_RECV_BUFFER;
    recv_buf = malloc(recv_cap);
    if (send_buf == NULL || recv_buf == NULL) {
        err = rdps__set_err(RDPS_ENOMEM, "SA query: out of memory");
        goto out_agent;
    }
    memset(send_buf, 0, (size_t)umad_size() + RDPS_MAD_SIZE);

    struct rdps_sa_mcmember match;
    memset(&match, 0, sizeof(match));
    uint64_t comp_mask = 0;
    if (mgid != NULL) {
        memcpy(match.mgid, mgid, 16);
        comp_mask = RDPS_SA_MCM_COMP_MGID;
    }
    uint64_t tid = ((uint64_t)(uint32_t)clock_ms() << 8) ^ (uint64_t)(uintptr_t)send_buf;
    err = rdps__sa_mcmember_query_encode(umad_get_mad(send_buf), RDPS_MAD_SIZE, tid, &match,
                                         comp_mask);
    if (err < 0)
        goto out_agent;
    umad_set_addr(send_buf, port.sm_lid, SA_QP, port.sm_sl, SA_QKEY);
    int per_try = (int)(timeout_ms / (SA_SEND_RETRY + 1)) + 1;
    if (umad_send(fd, agent, send_buf, RDPS_MAD_SIZE, per_try, SA_SEND_RETRY) < 0) {
        err = rdps__set_err(rdps__errno_code(errno), "umad_send to SA (LID %u): %s", port.sm_lid,
                            strerror(errno));
        goto out_agent;
    }
    uint8_t *mad = NULL;
    /* A little slack past the MAD layer's own retries so its timeout status arrives first. */
    int len =
        receive_response(fd, agent, tid, clock_ms() + timeout_ms + 500, &recv_buf, &recv_cap, &mad);
    if (len < 0) {
        err = rdps__prepend_err(len, "SA query on %s/%u: ", device_name, port_num);
        goto out_agent;
    }
    err = rdps__sa_mcmember_response_decode(mad, (size_t)len, tid, out, max);
    if (err < 0)
        rdps__prepend_err(err, "SA query on %s/%u: ", device_name, port_num);

out_agent:
    free(recv_buf);
    if (send_buf != NULL)
        umad_free(send_buf);
    umad_unregister(fd, agent);
out_fd:
    umad_close_port(fd);
out_port:
    umad_release_port(&port);
out_done:
    umad_done();
    return err;
}
