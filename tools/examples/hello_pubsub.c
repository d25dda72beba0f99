/* SPDX-License-Identifier: BSD-2-Clause */
/* hello_pubsub.c - the README's example: publish ten messages on a topic and receive them. */
#include <rdps/rdps.h>
#include <stdio.h>

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)user;
    printf("%s: %.*s (seq %u)\n", info->topic, (int)len, (const char *)data, info->seq);
}

int main(void)
{
    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_config_init(&cfg); /* first active RDMA port; cfg.device / cfg.bind_ip to choose */
    int rc = rdps_ctx_create(&cfg, &ctx);
    if (rc < 0) {
        fprintf(stderr, "rdps: %s: %s\n", rdps_strerror(rc), rdps_last_error_message());
        return 1;
    }
    rdps_sub_create(ctx, "md.quotes", on_msg, NULL, NULL, &sub);
    rdps_pub_create(ctx, "md.quotes", NULL, &pub);
    while (!rdps_pub_ready(pub) || !rdps_sub_ready(sub)) /* multicast joins complete */
        rdps_ctx_wait(ctx, 100);
    for (int i = 0; i < 10; i++) {
        char text[32];
        int len = snprintf(text, sizeof(text), "quote %d", i);
        while (rdps_pub_send(pub, text, (size_t)len) == RDPS_EAGAIN)
            rdps_ctx_poll(ctx, 0); /* back-pressure: make progress, retry */
    }
    rdps_ctx_wait(ctx, 100);
    rdps_ctx_destroy(ctx); /* also destroys pub and sub */
    return 0;
}
