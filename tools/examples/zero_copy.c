/* SPDX-License-Identifier: BSD-2-Clause */
/* zero_copy.c - publishing without a copy: claim room in a registered buffer (a reliable
 * publisher's retransmission ring), build the message in place, commit; abort on a change of
 * mind. */
#include <rdps/rdps.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * usage: zero_copy [COUNT]
 * Publishes COUNT quotes reliably, each built in place, and receives them in a second ctx of this
 * process (RDPS_DEVICE=loopback runs it without RDMA); exits 0 when all arrived in order.
 */

/* A fixed-layout quote, written straight into the claimed datagram. */
struct quote {
    uint64_t seq;
    uint32_t instrument;
    int32_t bid_ticks, ask_ticks;
    uint32_t bid_size, ask_size;
};

struct book {
    uint64_t next, received;
};

static void on_quote(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct book *b = user;
    struct quote q;
    (void)info;
    if (len != sizeof(q))
        return;
    memcpy(&q, data, sizeof(q));
    if (q.seq == b->next)
        b->next++;
    b->received++;
}

/* Claims room, builds quote `seq` in it, commits. RDPS_EAGAIN (back-pressure) leaves nothing
 * claimed: the caller makes progress and tries again. */
static int publish_quote(rdps_pub_t *pub, uint64_t seq)
{
    rdps_claim claim;
    int rc = rdps_pub_claim(pub, &claim);
    if (rc < 0)
        return rc;
    if (claim.capacity < sizeof(struct quote)) { /* cannot happen on a real port; be safe */
        rdps_pub_abort(pub, &claim);             /* gives the room back, nothing is sent */
        return RDPS_EMSGSIZE;
    }
    struct quote *q = claim.data; /* registered memory: the device reads it from here */
    q->seq = seq;
    q->instrument = (uint32_t)(seq % 500);
    q->bid_ticks = 10000 + (int32_t)(seq % 7);
    q->ask_ticks = q->bid_ticks + 1;
    q->bid_size = 100;
    q->ask_size = 200;
    /* Commit ends the claim whatever it returns; claim.data must not be touched after it. */
    return rdps_pub_commit(pub, &claim, sizeof(*q));
}

int main(int argc, char **argv)
{
    uint64_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000;
    rdps_config cfg;
    rdps_ctx_t *pub_ctx = NULL, *sub_ctx = NULL;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct book book = {0};
    rdps_pub_opts popts = {.reliable = 1};
    rdps_sub_opts sopts = {.reliable = 1};

    rdps_config_init(&cfg);
    if (rdps_ctx_create(&cfg, &pub_ctx) < 0 || rdps_ctx_create(&cfg, &sub_ctx) < 0 ||
        rdps_sub_create(sub_ctx, "md.quotes.zc", on_quote, &book, &sopts, &sub) < 0 ||
        rdps_pub_create(pub_ctx, "md.quotes.zc", &popts, &pub) < 0) {
        fprintf(stderr, "zero_copy: %s\n", rdps_last_error_message());
        rdps_ctx_destroy(pub_ctx);
        rdps_ctx_destroy(sub_ctx);
        return 1;
    }
    int rc = 0;
    for (uint64_t i = 0; i < count && rc == 0;) {
        rc = publish_quote(pub, i);
        if (rc == 0)
            i++;
        if (rc == RDPS_EAGAIN)
            rc = 0; /* back-pressure: poll both contexts below, then claim again */
        /* One thread drives both contexts here; a real publisher would rdps_ctx_wait(). */
        rdps_ctx_poll(pub_ctx, 0);
        rdps_ctx_poll(sub_ctx, 0);
    }
    for (int i = 0; i < 10000 && book.received < count; i++) {
        rdps_ctx_poll(pub_ctx, 0);
        rdps_ctx_wait(sub_ctx, 1);
    }
    if (rc < 0)
        fprintf(stderr, "zero_copy: %s: %s\n", rdps_strerror(rc), rdps_last_error_message());
    printf("%llu of %llu quotes received in order\n", (unsigned long long)book.next,
           (unsigned long long)count);
    rdps_ctx_destroy(pub_ctx);
    rdps_ctx_destroy(sub_ctx);
    return rc == 0 && book.next == count ? 0 : 1;
}
