/* SPDX-License-Identifier: BSD-2-Clause */
/* ctx_options.h - the options the tools built on a ctx share: device, bind address, group, cm port,
 * loss generator, --help and --version. */
#ifndef RDPS_TOOLS_CTX_OPTIONS_H
#define RDPS_TOOLS_CTX_OPTIONS_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rdps/rdps.h>

#include "tool_cli.h"

/* getopt_long codes of the shared long options (above any tool's own). */
enum tool_ctx_option_code {
    TOOL_OPT_GROUP = 1000,
    TOOL_OPT_CM_PORT,
    TOOL_OPT_LOSS_RX,
    TOOL_OPT_LOSS_TX,
    TOOL_OPT_LOSS_SEED,
    TOOL_OPT_LOSS_FRAMES,
    TOOL_OPT_KEY_FILE,
    TOOL_OPT_ENCRYPT,
    TOOL_OPT_TRANSPORT,
    TOOL_OPT_PEERS,
    TOOL_OPT_PARITY_BLOCKS,
};

/*
 * The authenticated-domain options every tool that sends or receives rdps frames takes (in
 * TOOL_CTX_LONG_OPTIONS, and in rdps-ping's own table): --key-file PATH (the key file format of
 * rdps_domain_key_read; default: $RDPS_DOMAIN_KEY_FILE) and --encrypt.
 */
#define TOOL_KEY_LONG_OPTIONS                                 \
    {"key-file", required_argument, NULL, TOOL_OPT_KEY_FILE}, \
    {                                                         \
        "encrypt", no_argument, NULL, TOOL_OPT_ENCRYPT        \
    }

struct tool_key_options {
    const char *file; /* NULL: $RDPS_DOMAIN_KEY_FILE (the library reads it for a ctx) */
    bool encrypt;
};

/* Takes one getopt_long result: 1 when it was --key-file or --encrypt (stored), 0 otherwise. */
int tool_key_option(int code, const char *arg, struct tool_key_options *k);
/* The --help lines of these options. */
void tool_key_options_usage(FILE *out);
/*
 * The key these options name for a tool without a ctx (rdps-ping): --key-file, else
 * $RDPS_DOMAIN_KEY_FILE when set and not empty. 1 and *key / *key_id when there is one, 0 for
 * none (keyless), -1 after printing the error (unreadable, malformed, or a file others can read).
 */
int tool_key_load(const char *prog, const struct tool_key_options *k,
                  uint8_t key[RDPS_DOMAIN_KEY_BYTES], uint32_t *key_id);

/*
 * Short options "b:d:" plus these long ones go into each tool's option table;
 * --version (tool_cli.h) comes with them, so every tool built on a ctx has it.
 */
#define TOOL_CTX_SHORT_OPTIONS "b:d:"
#define TOOL_CTX_LONG_OPTIONS                                                                      \
    {"bind", required_argument, NULL, 'b'}, {"device", required_argument, NULL, 'd'},              \
        {"group", required_argument, NULL, TOOL_OPT_GROUP},                                        \
        {"cm-port", required_argument, NULL, TOOL_OPT_CM_PORT},                                    \
        {"loss-rx", required_argument, NULL, TOOL_OPT_LOSS_RX},                                    \
        {"loss-tx", required_argument, NULL, TOOL_OPT_LOSS_TX},                                    \
        {"loss-frames", required_argument, NULL, TOOL_OPT_LOSS_FRAMES},                            \
        {"loss-seed", required_argument, NULL, TOOL_OPT_LOSS_SEED},                                \
        {"transport", required_argument, NULL, TOOL_OPT_TRANSPORT},                                \
        {"peers", required_argument, NULL, TOOL_OPT_PEERS},                                        \
        {"parity-blocks", required_argument, NULL, TOOL_OPT_PARITY_BLOCKS}, TOOL_KEY_LONG_OPTIONS, \
        TOOL_VERSION_LONG_OPTION

struct tool_ctx_options {
    const char *bind_ip, *device, *group;
    uint64_t cm_port; /* 0: automatic */
    double loss_rx, loss_tx;
    uint64_t loss_seed;
    uint32_t loss_frame_types; /* rdps_config.loss_frame_types; 0: data only */
    struct tool_key_options key;
    /* --transport: how the tool's topics travel (its publishers' and subscribers' mode); --peers:
     * seed peers for discovery without multicast (NULL: $RDPS_PEERS, read by the library). */
    rdps_transport_mode transport;
    const char *peers;
    uint64_t parity_blocks; /* --parity-blocks: rdps_config.parity_blocks (0: none) */
};

/* --transport's value: "multicast", "unicast" or "auto" into *out; false (error printed) else. */
bool tool_parse_transport(const char *prog, const char *arg, rdps_transport_mode *out);
/* The --help lines of --transport and --peers (tools with their own option table). */
void tool_transport_options_usage(FILE *out);

void tool_ctx_options_init(struct tool_ctx_options *o);
/*
 * Takes one getopt_long result: 1 when it was a shared option (stored), 0
 * when it is the tool's own, -1 for a bad value (the error is printed);
 * --version prints the version and exits 0.
 */
int tool_ctx_option(const char *prog, int code, const char *arg, struct tool_ctx_options *o);
/* Checks the combination (not both -b and -d); prints the error. */
bool tool_ctx_options_check(const char *prog, const struct tool_ctx_options *o);
/* The shared lines of --help (these options, -h/--help and --version). */
void tool_ctx_options_usage(FILE *out);
/*
 * Creates the context these options describe (max_message_size raised to at
 * least max_message); prints one clear error line on failure.
 */
int tool_ctx_open(const char *prog, const struct tool_ctx_options *o, size_t max_message,
                  rdps_ctx_t **ctx);

/* Back-pressure that lasts this long means the device stopped completing sends. */
#define TOOL_SEND_STALL_NS 10000000000ull
#define TOOL_SEND_STALLED  1
/* Polls of a back-pressured send before it sleeps on the ctx's events. On soft-RoCE the kernel
 * sends and receives for the device on the same CPUs, and a sender spinning through a closed
 * window took them from it (rxe across two guests, reliable 1 KiB messages, 6 interleaved
 * rounds: 11 % more messages per second lossless, 9 % at 1 % loss, 4 % at 5 %). */
#define TOOL_SEND_SPINS 16u

/*
 * rdps_pub_send_ex through back-pressure: polls the ctx while it returns RDPS_EAGAIN (each one
 * counted in *eagain), and after TOOL_SEND_SPINS polls waits on the ctx's events (at most 1 ms
 * at a time). Returns 0, a negative rdps code, RDPS_ECANCELED once *stop is set, or
 * TOOL_SEND_STALLED when back-pressure did not clear within TOOL_SEND_STALL_NS.
 */
int tool_send(rdps_ctx_t *ctx, rdps_pub_t *pub, const void *data, size_t len, unsigned flags,
              const volatile sig_atomic_t *stop, uint64_t *eagain);

#endif /* RDPS_TOOLS_CTX_OPTIONS_H */
