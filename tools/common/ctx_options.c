/* SPDX-License-Identifier: BSD-2-Clause */
/* ctx_options.c - parsing and applying the context options the rdps tools share. */
#include "ctx_options.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_clock.h"
#include "tool_cli.h"

/* --loss-frames data,heartbeat,nak,status,announce,parity | all: bits (1 << frame type). */
static bool parse_loss_frames(const char *prog, const char *arg, uint32_t *out)
{
    static const struct {
        const char *name;
        uint32_t bits;
    } names[] = {{"data", 1u << 1},   {"heartbeat", 1u << 2}, {"nak", 1u << 3},
                 {"status", 1u << 4}, {"announce", 1u << 5},  {"parity", 1u << 6},
                 {"all", 0x7eu}};
    uint32_t bits = 0;
    const char *p = arg;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            if (strlen(names[i].name) == len && strncmp(p, names[i].name, len) == 0) {
                bits |= names[i].bits;
                found = true;
            }
        }
        if (!found) {
            tool_error(prog,
                       "--loss-frames: '%.*s' is not one of data, heartbeat, nak, status, "
                       "announce, parity, all",
                       (int)len, p);
            return false;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    if (bits == 0) {
        tool_error(prog, "--loss-frames: empty list");
        return false;
    }
    *out = bits;
    return true;
}

void tool_ctx_options_init(struct tool_ctx_options *o)
{
    *o = (struct tool_ctx_options){.loss_seed = 1};
}

int tool_ctx_option(const char *prog, int code, const char *arg, struct tool_ctx_options *o)
{
    switch (code) {
    case 'b':
        o->bind_ip = arg;
        return 1;
    case 'd':
        o->device = arg;
        return 1;
    case TOOL_OPT_GROUP:
        o->group = arg;
        return 1;
    case TOOL_OPT_CM_PORT:
        return tool_opt_u64(prog, "--cm-port", arg, 1, 65535, &o->cm_port) ? 1 : -1;
    case TOOL_OPT_LOSS_RX:
    case TOOL_OPT_LOSS_TX:
        if (code == TOOL_OPT_LOSS_RX)
            return tool_opt_probability(prog, "--loss-rx", arg, &o->loss_rx) ? 1 : -1;
        return tool_opt_probability(prog, "--loss-tx", arg, &o->loss_tx) ? 1 : -1;
    case TOOL_OPT_LOSS_FRAMES:
        return parse_loss_frames(prog, arg, &o->loss_frame_types) ? 1 : -1;
    case TOOL_OPT_LOSS_SEED:
        return tool_opt_u64(prog, "--loss-seed", arg, 0, UINT64_MAX, &o->loss_seed) ? 1 : -1;
    case TOOL_OPT_TRANSPORT:
        return tool_parse_transport(prog, arg, &o->transport) ? 1 : -1;
    case TOOL_OPT_PEERS:
        o->peers = arg;
        return 1;
    case TOOL_OPT_PARITY_BLOCKS:
        return tool_opt_u64(prog, "--parity-blocks", arg, 0, 4096, &o->parity_blocks) ? 1 : -1;
    case TOOL_OPT_VERSION:
        tool_version_exit(prog);
    default:
        return tool_key_option(code, arg, &o->key);
    }
}

bool tool_parse_transport(const char *prog, const char *arg, rdps_transport_mode *out)
{
    if (strcmp(arg, "multicast") == 0)
        *out = RDPS_TRANSPORT_MULTICAST;
    else if (strcmp(arg, "unicast") == 0)
        *out = RDPS_TRANSPORT_UNICAST;
    else if (strcmp(arg, "auto") == 0)
        *out = RDPS_TRANSPORT_AUTO;
    else {
        tool_error(prog, "--transport: '%s' is not one of multicast, unicast, auto", arg);
        return false;
    }
    return true;
}

void tool_transport_options_usage(FILE *out)
{
    fprintf(out,
            "      --transport T   multicast (default), unicast (a copy to each subscriber, no\n"
            "                      group) or auto (multicast, unicast when the group cannot be\n"
            "                      joined or carries nothing)\n"
            "      --peers LIST    seed peers ip[:port],... for discovery without multicast\n"
            "                      (default $RDPS_PEERS)\n");
}

int tool_key_option(int code, const char *arg, struct tool_key_options *k)
{
    if (code == TOOL_OPT_KEY_FILE) {
        k->file = arg;
        return 1;
    }
    if (code == TOOL_OPT_ENCRYPT) {
        k->encrypt = true;
        return 1;
    }
    return 0;
}

void tool_key_options_usage(FILE *out)
{
    fprintf(out, "      --key-file PATH authenticated domain: the domain key file (64 hex digits,\n"
                 "                      optionally ID: before them; mode 0600), default\n"
                 "                      $RDPS_DOMAIN_KEY_FILE; frames without its tag are dropped\n"
                 "      --encrypt       with a key: encrypt payloads too, not only authenticate\n");
}

int tool_key_load(const char *prog, const struct tool_key_options *k,
                  uint8_t key[RDPS_DOMAIN_KEY_BYTES], uint32_t *key_id)
{
    const char *file = k->file;
    if (file == NULL) {
        file = getenv("RDPS_DOMAIN_KEY_FILE");
        if (file != NULL && file[0] == '\0')
            file = NULL;
    }
    if (file == NULL) {
        if (k->encrypt) {
            tool_error(prog, "--encrypt needs a domain key (--key-file or RDPS_DOMAIN_KEY_FILE)");
            return -1;
        }
        return 0;
    }
    if (rdps_domain_key_read(file, key, key_id) < 0) {
        tool_error(prog, "%s", rdps_last_error_message());
        return -1;
    }
    return 1;
}

bool tool_ctx_options_check(const char *prog, const struct tool_ctx_options *o)
{
    if (o->bind_ip && o->device) {
        tool_error(prog, "give either -b BIND_IP or -d DEV, not both");
        return false;
    }
    return true;
}

void tool_ctx_options_usage(FILE *out)
{
    fprintf(out,
            "  -b, --bind IP       local IPv4 address selecting the RDMA device\n"
            "  -d, --device DEV    RDMA device name (e.g. rxe0; default: first active port);\n"
            "                      local: the processes of this host, without RDMA (local:4096\n"
            "                      for 4 KiB datagrams); loopback: this process only\n"
            "      --group ADDR    explicit multicast group instead of the topic hash\n"
            "      --cm-port P     rdma_cm port of this context (default: 7471 or the next free)\n"
            "      --loss-rx RATE  drop received data frames with probability RATE (0.1 or 10%%)\n"
            "      --loss-tx RATE  drop data frames before sending with probability RATE\n"
            "      --loss-seed N   seed of the loss generator (default 1)\n"
            "      --loss-frames L frame types the loss generator drops, comma-separated:\n"
            "                      data, heartbeat, nak, status, announce, parity, all\n"
            "                      (default data)\n"
            "      --parity-blocks N  reliable subscribers: keep N blocks for parity repairs\n"
            "                      (publishers with --parity-k; 32 covers the window; 0: none)\n");
    tool_transport_options_usage(out);
    tool_key_options_usage(out);
    fprintf(out, "  -h, --help          this text\n"
                 "      --version       the tool's and librdps's version and git revision\n");
}

int tool_ctx_open(const char *prog, const struct tool_ctx_options *o, size_t max_message,
                  rdps_ctx_t **ctx)
{
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = o->device;
    cfg.bind_ip = o->bind_ip;
    cfg.cm_port = (uint16_t)o->cm_port;
    cfg.loss_rx_rate = o->loss_rx;
    cfg.loss_tx_rate = o->loss_tx;
    cfg.loss_seed = o->loss_seed;
    cfg.loss_frame_types = o->loss_frame_types;
    cfg.domain_key_file = o->key.file; /* NULL: the library reads $RDPS_DOMAIN_KEY_FILE */
    cfg.encrypt = o->key.encrypt;
    cfg.peers = o->peers; /* NULL: the library reads $RDPS_PEERS */
    cfg.parity_blocks = (uint32_t)o->parity_blocks;
    if (max_message > cfg.max_message_size)
        cfg.max_message_size = max_message;
    int rc = rdps_ctx_create(&cfg, ctx);
    if (rc < 0)
        tool_error(prog, "cannot open an rdps context: %s (%s)", rdps_strerror(rc),
                   rdps_last_error_message());
    return rc;
}

int tool_send(rdps_ctx_t *ctx, rdps_pub_t *pub, const void *data, size_t len, unsigned flags,
              const volatile sig_atomic_t *stop, uint64_t *eagain)
{
    uint64_t give_up = 0;
    unsigned spins = 0;
    for (;;) {
        int rc = rdps_pub_send_ex(pub, data, len, flags);
        if (rc != RDPS_EAGAIN)
            return rc;
        (*eagain)++;
        if (*stop)
            return RDPS_ECANCELED;
        uint64_t now = rdps__clock_monotonic_ns();
        if (give_up == 0)
            give_up = now + TOOL_SEND_STALL_NS;
        else if (now > give_up)
            return TOOL_SEND_STALLED;
        rc = ++spins <= TOOL_SEND_SPINS ? rdps_ctx_poll(ctx, 0) : rdps_ctx_wait(ctx, 1);
        if (rc < 0)
            return rc;
    }
}
