/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_peer.c - two-guest verbs UD exchange: guest 0 echoes, guest 1 sends 1..max_payload bytes
 * and checks the echoes. */
#include "rdps_error.h"
#include "verbs_test_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

/* The guests learn each other's GID and QPN through the harness's shared scratch directory. */
static int write_info(const char *dir, const struct rdps_verbs_info *info)
{
    char path[512], tmp[520];
    snprintf(path, sizeof(path), "%s/verbs-peer-0", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "%" PRIu32 " ", info->qpn);
    for (int i = 0; i < 16; i++)
        fprintf(f, "%02x", info->gid.raw[i]);
    fprintf(f, "\n");
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

static int read_info(const char *dir, uint32_t *qpn, union ibv_gid *gid)
{
    char path[512], hex[40];
    snprintf(path, sizeof(path), "%s/verbs-peer-0", dir);
    for (int tries = 0; tries < 1200; tries++) {
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            int ok = fscanf(f, "%" SCNu32 " %32s", qpn, hex) == 2 && strlen(hex) == 32;
            fclose(f);
            if (!ok)
                return -1;
            for (int i = 0; i < 16; i++) {
                unsigned byte;
                if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
                    return -1;
                gid->raw[i] = (uint8_t)byte;
            }
            return 0;
        }
        vt_sleep_ms(100);
    }
    return -1;
}

static uint8_t pattern_byte(uint32_t len, uint32_t i)
{
    return (uint8_t)(len * 13u + i * 7u + (i >> 8));
}

static int pattern_ok(const uint8_t *buf, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) {
        if (buf[i] != pattern_byte(len, i))
            return 0;
    }
    return 1;
}

static int send_to(struct rdps_transport *t, const struct rdps_dest *dest, const uint8_t *data,
                   uint32_t len)
{
    struct rdps_tx_buf buf;
    int err;
    uint64_t deadline = vt_now_ms() + 5000;
    struct rdps_rx_datagram none[1];
    while ((err = t->ops->claim(t, &buf)) == RDPS_EAGAIN && vt_now_ms() < deadline)
        (void)t->ops->poll(t, none, 0);
    if (err < 0)
        return err;
    if (data != NULL)
        memcpy(buf.data, data, len <= buf.capacity ? len : buf.capacity);
    else
        for (uint32_t i = 0; i < len && i < buf.capacity; i++)
            buf.data[i] = pattern_byte(len, i);
    err = t->ops->submit(t, &buf, len, &dest, 1);
    return err < 0 ? err : t->ops->flush(t);
}

#define QUIT_LEN 5
static const uint8_t quit_msg[QUIT_LEN] = {'Q', 'U', 'I', 'T', '!'};

static int run_echo(struct rdps_transport *t, const char *dir, const struct rdps_verbs_info *info)
{
    struct rdps_rx_datagram rx[16];
    uint64_t deadline = vt_now_ms() + 240000;
    unsigned echoed = 0, bad = 0;

    if (write_info(dir, info) != 0) {
        fprintf(stderr, "verbs_peer: cannot write %s/verbs-peer-0: %s\n", dir, strerror(errno));
        return 1;
    }
    while (vt_now_ms() < deadline) {
        int n = t->ops->poll(t, rx, 16);
        if (n < 0) {
            fprintf(stderr, "verbs_peer: poll: %s\n", rdps_strerror(n));
            return 1;
        }
        for (int i = 0; i < n; i++) {
            if (rx[i].len == QUIT_LEN && memcmp(rx[i].data, quit_msg, QUIT_LEN) == 0) {
                printf("echo side: %u datagrams echoed, %u bad\n", echoed, bad);
                return bad == 0 && echoed > 0 ? 0 : 1;
            }
            if (!pattern_ok(rx[i].data, rx[i].len))
                bad++;
            const struct rdps_dest *reply = NULL;
            if (rdps__transport_reply(t, &rx[i], &reply) < 0 ||
                send_to(t, reply, rx[i].data, rx[i].len) < 0)
                bad++;
            else
                echoed++;
        }
        t->ops->rx_release(t, rx, n);
        if (n == 0)
            vt_sleep_ms(0);
    }
    fprintf(stderr, "verbs_peer: no QUIT within 240 s (%u echoed)\n", echoed);
    return 1;
}

static int run_sender(struct rdps_transport *t, const char *dir, const struct rdps_verbs_info *info)
{
    uint32_t peer_qpn;
    union ibv_gid peer_gid;
    struct rdps_verbs_info peer;
    struct rdps_rx_datagram rx[4];

    if (read_info(dir, &peer_qpn, &peer_gid) != 0) {
        fprintf(stderr, "verbs_peer: no readable peer info in %s\n", dir);
        return 1;
    }
    memset(&peer, 0, sizeof(peer));
    peer.gid = peer_gid;
    struct ibv_ah *ah = vt_make_ah(info, &peer);
    if (ah == NULL) {
        fprintf(stderr, "verbs_peer: ibv_create_ah: %s\n", strerror(errno));
        return 1;
    }
    struct rdps_dest dest = {.ah = ah, .remote_qpn = peer_qpn, .remote_qkey = RDPS_DEFAULT_QKEY};
    uint32_t max = info->max_payload;
    uint32_t sizes[] = {1,       2,       16, 64, info->max_inline, info->max_inline + 1,
                        max / 2, max - 1, max};
    int failures = 0;

    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        uint32_t len = sizes[k];
        int ok = 0;
        /* UD may lose a datagram on the wire: up to 3 tries, each waits 3 s for the echo. */
        for (int attempt = 0; attempt < 3 && !ok; attempt++) {
            int err = send_to(t, &dest, NULL, len);
            if (err < 0) {
                fprintf(stderr, "verbs_peer: send %u bytes: %s: %s\n", len, rdps_err_name(err),
                        rdps_last_error_message());
                break;
            }
            uint64_t deadline = vt_now_ms() + 3000;
            while (!ok && vt_now_ms() < deadline) {
                int n = t->ops->poll(t, rx, 4);
                for (int i = 0; i < n; i++) {
                    if (rx[i].len == len && pattern_ok(rx[i].data, len) &&
                        rx[i].src_qpn == peer_qpn)
                        ok = 1;
                }
                if (n > 0)
                    t->ops->rx_release(t, rx, n);
                else
                    vt_sleep_ms(0);
            }
        }
        printf("size %4u: %s\n", len, ok ? "echoed intact" : "FAILED");
        failures += !ok;
    }
    int err = send_to(t, &dest, NULL, max + 1);
    printf("size %4u: %s (%s)\n", max + 1, rdps_err_name(err), rdps_last_error_message());
    if (err != RDPS_EMSGSIZE)
        failures++;
    for (int i = 0; i < 3; i++) {
        (void)send_to(t, &dest, quit_msg, QUIT_LEN);
        vt_sleep_ms(200);
    }
    ibv_destroy_ah(ah);
    return failures == 0 ? 0 : 1;
}

int main(void)
{
    const char *dir = getenv("RDPS_VM_SCRATCH");
    const char *index = getenv("RDPS_VM_INDEX");
    if (!vt_have_device() || dir == NULL || index == NULL) {
        fprintf(stderr, "verbs_peer: needs an RDMA device and tools/rxe-vm (RDPS_VM_*), skipped\n");
        return VT_SKIP;
    }
    struct rdps_verbs_config cfg = {.device_name = vt_device()};
    struct rdps_transport *t;
    struct rdps_verbs_info info;
    int err = rdps__verbs_transport_create(&cfg, &t);
    if (err < 0) {
        fprintf(stderr, "verbs_peer: %s\n", rdps_last_error_message());
        return 1;
    }
    rdps__verbs_transport_info(t, &info);
    int rc = strcmp(index, "0") == 0 ? run_echo(t, dir, &info) : run_sender(t, dir, &info);
    t->ops->destroy(t);
    return rc;
}
